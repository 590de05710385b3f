/**
 * The local control plane's certificates and keys: one CA, the API server's serving certificate
 * (127.0.0.1 and localhost), the admin client certificate (O=system:masters, the only group that
 * bypasses RBAC) and the ServiceAccount token signing key pair. Keys come from Node's native
 * generator (fast); node-forge only assembles and signs the X.509 certificates, which Node's
 * crypto cannot do.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import forge from 'node-forge';

export interface Pki {
  caCert: string;
  servingCert: string;
  servingKey: string;
  adminCert: string;
  adminKey: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
}

interface KeyPair {
  privatePem: string;
  publicPem: string;
}

function rsaKeyPair(): KeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    privatePem: privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

interface CertSpec {
  subject: forge.pki.CertificateField[];
  extensions: object[];
  keys: KeyPair;
  issuer?: { cert: forge.pki.Certificate; keys: KeyPair };
}

const YEAR_MS = 365 * 24 * 3600 * 1000;

function makeCert(spec: CertSpec): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.publicKeyFromPem(spec.keys.publicPem);
  // A positive serial: the high bit of the first byte cleared.
  cert.serialNumber = '0' + randomBytes(16).toString('hex').slice(1);
  const now = Date.now();
  cert.validity.notBefore = new Date(now - 60_000);
  cert.validity.notAfter = new Date(now + YEAR_MS);
  cert.setSubject(spec.subject);
  cert.setIssuer(spec.issuer ? spec.issuer.cert.subject.attributes : spec.subject);
  cert.setExtensions(spec.extensions);
  const signer = forge.pki.privateKeyFromPem((spec.issuer?.keys ?? spec.keys).privatePem);
  cert.sign(signer, forge.md.sha256.create());
  return cert;
}

export function generatePki(): Pki {
  const caKeys = rsaKeyPair();
  const ca = makeCert({
    subject: [{ name: 'commonName', value: 'echoperator-local-ca' }],
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
    keys: caKeys,
  });
  const issuer = { cert: ca, keys: caKeys };

  const servingKeys = rsaKeyPair();
  const serving = makeCert({
    subject: [{ name: 'commonName', value: 'kube-apiserver' }],
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          { type: 2, value: 'localhost' },
          { type: 2, value: 'kubernetes.default.svc' },
          { type: 7, ip: '127.0.0.1' },
        ],
      },
    ],
    keys: servingKeys,
    issuer,
  });

  const adminKeys = rsaKeyPair();
  const admin = makeCert({
    subject: [
      { name: 'commonName', value: 'admin' },
      { name: 'organizationName', value: 'system:masters' },
    ],
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', clientAuth: true },
    ],
    keys: adminKeys,
    issuer,
  });

  const saKeys = rsaKeyPair();
  const pem = (c: forge.pki.Certificate): string => forge.pki.certificateToPem(c);
  return {
    caCert: pem(ca),
    servingCert: pem(serving),
    servingKey: servingKeys.privatePem,
    adminCert: pem(admin),
    adminKey: adminKeys.privatePem,
    serviceAccountKey: saKeys.privatePem,
    serviceAccountPub: saKeys.publicPem,
  };
}
