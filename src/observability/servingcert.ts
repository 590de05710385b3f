/**
 * The metrics server's certificate from a directory laid out as cert-manager (and any
 * kubernetes.io/tls Secret mount) lays it out: `tls.crt` (the certificate, chain after it) and
 * `tls.key`, reloaded when it changes, without a restart (controller-runtime's certwatcher).
 *
 * Why polling the contents every few seconds rather than fs.watch: the kubelet updates a Secret
 * volume by writing a new hidden folder and swapping the `..data` symlink, which inotify reports on
 * the symlink's folder, not on `tls.crt` (and not at all on some file systems); reading two small
 * files every 5 s is cheap and sees every kind of update the same way.
 *
 * Guarantees: load() reads a pair and checks it (both parse, and the key belongs to the
 * certificate) or throws naming the file and the problem. A watcher hands each new valid pair to
 * onChange once; a pair that is broken (half written, or a key that does not match) is logged
 * once and skipped, and the previous one stays in use until a valid pair appears. stop() clears
 * its timer.
 */
import { createHash, createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createSecureContext } from 'node:tls';
import { type Clock, type Logger, nopLogger, type Timer } from '../runtime/index.js';
import type { ServingCertificate } from './selfsigned.js';

export const CERT_FILE = 'tls.crt';
export const KEY_FILE = 'tls.key';

export class CertificateError extends Error {
  override readonly name = 'CertificateError';
}

/** What a log line may say about a certificate (never the key). */
export interface CertificateInfo {
  subject: string;
  notAfter: string;
  /** SHA-256 of the DER certificate, as `openssl x509 -fingerprint -sha256` prints it. */
  fingerprint: string;
}

export function describeCertificate(certPem: string): CertificateInfo {
  const x = new X509Certificate(certPem);
  return { subject: x.subject.replace(/\n/g, ', '), notAfter: x.validTo, fingerprint: x.fingerprint256 };
}

/** The certificate's notAfter, in whole seconds since the Unix epoch (what an expiry gauge holds). */
export function certificateNotAfterSeconds(certPem: string): number {
  return Math.floor(Date.parse(new X509Certificate(certPem).validTo) / 1000);
}

/** Reads and checks the pair in `dir`. */
export function loadCertificateDir(dir: string): ServingCertificate {
  const read = (file: string): string => {
    try {
      return readFileSync(join(dir, file), 'utf8');
    } catch (err) {
      throw new CertificateError(`cannot read ${join(dir, file)}: ${(err as Error).message}`);
    }
  };
  const pair = { cert: read(CERT_FILE), key: read(KEY_FILE) };
  let x: X509Certificate;
  try {
    x = new X509Certificate(pair.cert);
  } catch (err) {
    throw new CertificateError(`${join(dir, CERT_FILE)} is not a PEM certificate: ${(err as Error).message}`);
  }
  try {
    if (!x.checkPrivateKey(createPrivateKey(pair.key))) throw new Error('it is not the key of the certificate');
    // What the TLS server will do with it: fails on what the two checks above let through.
    createSecureContext(pair);
  } catch (err) {
    throw new CertificateError(`${join(dir, KEY_FILE)} does not fit ${join(dir, CERT_FILE)}: ${(err as Error).message}`);
  }
  return pair;
}

export interface CertificateWatcherOptions {
  dir: string;
  /** The pair in use now (as loaded at start). */
  current: ServingCertificate;
  onChange(pair: ServingCertificate): void;
  clock: Clock;
  /** Default 5 s. */
  intervalMs?: number;
  logger?: Logger;
}

export class CertificateWatcher {
  private timer: Timer | undefined;
  /** Digest of the files as last read, valid or not: a broken pair is reported once, not every poll. */
  private seen: string;
  private readonly log: Logger;
  private stopped = false;

  constructor(private readonly options: CertificateWatcherOptions) {
    this.log = options.logger ?? nopLogger;
    this.seen = digest(options.current);
  }

  start(): void {
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
  }

  /** One poll (exposed for tests): reads the files and swaps in a new valid pair. */
  poll(): void {
    const { dir } = this.options;
    let raw: ServingCertificate;
    try {
      raw = { cert: readFileSync(join(dir, CERT_FILE), 'utf8'), key: readFileSync(join(dir, KEY_FILE), 'utf8') };
    } catch (err) {
      const d = `unreadable:${(err as Error).message}`;
      if (d !== this.seen)
        this.log.warn('metrics certificate: cannot read it; serving the previous one', { error: (err as Error).message });
      this.seen = d;
      return;
    }
    const d = digest(raw);
    if (d === this.seen) return;
    this.seen = d;
    let pair: ServingCertificate;
    try {
      pair = loadCertificateDir(dir);
    } catch (err) {
      this.log.warn('metrics certificate: the new pair is not valid; serving the previous one', { error: (err as Error).message });
      return;
    }
    this.options.onChange(pair);
    this.log.info('metrics certificate: reloaded', { dir, ...describeCertificate(pair.cert) });
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.options.clock.setTimer(this.options.intervalMs ?? 5_000, () => {
      this.poll();
      this.schedule();
    });
  }
}

function digest(p: ServingCertificate): string {
  return createHash('sha256').update(p.cert).update('\0').update(p.key).digest('hex');
}
