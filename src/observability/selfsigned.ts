/**
 * A self-signed serving certificate, made at start when no certificate is mounted (as
 * controller-runtime's metrics server does without a cert dir): an ECDSA P-256 key from
 * node:crypto, and an X.509 v3 certificate (CN echoperator; SANs: the host name, localhost,
 * 127.0.0.1, ::1; serverAuth; not a CA), signed with ECDSA-SHA256. Good enough for a scraper that
 * skips verification, which is what it is for; production mounts a real certificate.
 *
 * Why by hand (DER of one fixed certificate shape, ~100 lines) instead of a library, measured on
 * the bundle (421 KiB minified before this module): @peculiar/x509 2.2 adds 343 KiB and needs a
 * reflect-metadata polyfill at start; node-forge 1.4's x509 + rsa subset adds >= 175 KiB and can
 * only make RSA keys. Importing either lazily would not help: the bundle is one CommonJS file, so
 * the bytes ship either way. This module is 2.6 KiB minified (the whole HTTPS + authentication
 * feature: 421.2 -> 430.8 KiB). node:crypto (on Node and Deno alike) does the cryptography; this
 * module only lays out the bytes, and the tests check the result with node:crypto's
 * X509Certificate, a TLS handshake, and Prometheus verifying it (Go's crypto/x509) in the node tier.
 */
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { isIP } from 'node:net';

export interface ServingCertificate {
  /** PEM. */
  cert: string;
  /** PEM (PKCS#8). */
  key: string;
}

export interface SelfSignedOptions {
  /** DNS names and IP addresses for the subjectAltName; default localhost, 127.0.0.1, ::1. */
  hosts?: string[];
  commonName?: string;
  /** Default one year. */
  validityDays?: number;
  /** Wall-clock time of issue; default now. */
  now?: Date;
  /** The source of the serial's random bytes; default node:crypto's randomBytes (tests give fixed bytes). */
  randomBytes?: (size: number) => Buffer;
}

export function selfSignedCertificate(options: SelfSignedOptions = {}): ServingCertificate {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const now = options.now ?? new Date();
  // A minute of slack for clocks of scrapers that run slightly behind.
  const notBefore = new Date(now.getTime() - 60_000);
  const notAfter = new Date(now.getTime() + (options.validityDays ?? 365) * 86_400_000);
  const hosts = options.hosts ?? ['localhost', '127.0.0.1', '::1'];
  const name = seq(set(seq(oid('2.5.4.3'), tlv(0x0c, Buffer.from(options.commonName ?? 'echoperator', 'utf8')))));
  const serial = Buffer.from((options.randomBytes ?? randomBytes)(16));
  serial[0] = (serial[0]! & 0x7f) | 0x40; // positive, and no leading zero byte (DER wants the shortest form)
  const ecdsaWithSha256 = seq(oid('1.2.840.10045.4.3.2'));
  const tbs = seq(
    tlv(0xa0, integer(Buffer.from([2]))), // v3
    integer(serial),
    ecdsaWithSha256,
    name,
    seq(time(notBefore), time(notAfter)),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    tlv(
      0xa3,
      seq(
        extension('2.5.29.19', true, seq()), // basicConstraints: not a CA
        extension('2.5.29.15', true, tlv(0x03, Buffer.from([0x07, 0x80]))), // keyUsage: digitalSignature
        extension('2.5.29.37', false, seq(oid('1.3.6.1.5.5.7.3.1'))), // extKeyUsage: serverAuth
        extension('2.5.29.17', false, seq(...hosts.map(generalName))), // subjectAltName
      ),
    ),
  );
  const signature = sign('sha256', tbs, privateKey); // DER-encoded ECDSA signature
  const der = seq(tbs, ecdsaWithSha256, tlv(0x03, Buffer.concat([Buffer.from([0]), signature])));
  return { cert: pem('CERTIFICATE', der), key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string };
}

function tlv(tag: number, value: Buffer): Buffer {
  const n = value.length;
  const length = n < 0x80 ? Buffer.from([n]) : n < 0x100 ? Buffer.from([0x81, n]) : Buffer.from([0x82, n >> 8, n & 0xff]); // < 64 KiB here
  return Buffer.concat([Buffer.from([tag]), length, value]);
}

const seq = (...items: Buffer[]): Buffer => tlv(0x30, Buffer.concat(items));
const set = (...items: Buffer[]): Buffer => tlv(0x31, Buffer.concat(items));

/** A non-negative INTEGER from big-endian bytes (a leading 0 keeps the sign bit clear). */
function integer(bytes: Buffer): Buffer {
  return tlv(0x02, bytes[0]! & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes);
}

function oid(dotted: string): Buffer {
  const [a, b, ...rest] = dotted.split('.').map(Number);
  const out = [a! * 40 + b!];
  for (const arc of rest) {
    const base128 = [arc & 0x7f];
    for (let v = arc >>> 7; v > 0; v >>>= 7) base128.unshift((v & 0x7f) | 0x80);
    out.push(...base128);
  }
  return tlv(0x06, Buffer.from(out));
}

/** UTCTime until 2049, GeneralizedTime after (RFC 5280 4.1.2.5). */
function time(d: Date): Buffer {
  const iso = d.toISOString().replace(/[-:T]/g, '').slice(0, 14); // YYYYMMDDHHMMSS
  return d.getUTCFullYear() < 2050 ? tlv(0x17, Buffer.from(`${iso.slice(2)}Z`)) : tlv(0x18, Buffer.from(`${iso}Z`));
}

function extension(id: string, critical: boolean, value: Buffer): Buffer {
  return seq(oid(id), ...(critical ? [tlv(0x01, Buffer.from([0xff]))] : []), tlv(0x04, value));
}

/** dNSName [2] or iPAddress [7] (4 or 16 bytes). */
function generalName(host: string): Buffer {
  const family = isIP(host);
  if (family === 4) return tlv(0x87, Buffer.from(host.split('.').map(Number)));
  if (family === 6) return tlv(0x87, ipv6Bytes(host));
  return tlv(0x82, Buffer.from(host, 'ascii'));
}

function ipv6Bytes(address: string): Buffer {
  // A trailing dotted quad (::ffff:10.0.0.1) as the two groups it stands for.
  const ip = address.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_, a, b, c, d) =>
    [(Number(a) << 8) | Number(b), (Number(c) << 8) | Number(d)].map((g) => g.toString(16)).join(':'),
  );
  const [head = '', tail] = ip.split('::');
  const groups = (s: string): number[] => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const h = groups(head);
  const t = tail === undefined ? [] : groups(tail);
  const all = [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
  const out = Buffer.alloc(16);
  all.forEach((g, i) => out.writeUInt16BE(g, i * 2));
  return out;
}

function pem(label: string, der: Buffer): string {
  const b64 = der.toString('base64').replace(/(.{64})/g, '$1\n');
  return `-----BEGIN ${label}-----\n${b64.replace(/\n$/, '')}\n-----END ${label}-----\n`;
}
