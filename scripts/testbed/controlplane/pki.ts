/**
 * The local cluster's certificates and keys: one CA; the API server's serving certificate
 * (127.0.0.1, localhost, and the addresses pods and the node reach it at); the admin client
 * certificate (O=system:masters, the only group that bypasses RBAC); the identities of the node's
 * components (kubelet as system:node:NAME for the Node authorizer, kube-proxy, kube-scheduler)
 * and the API server's client certificate towards the kubelet; the ServiceAccount token signing
 * key pair. Keys come from Node's native
 * generator (fast); node-forge only assembles and signs the X.509 certificates, which Node's
 * crypto cannot do.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import forge from 'node-forge';
import { KUBERNETES_SERVICE_IP, NODE_IP, NODE_NAME } from './network.js';

export interface Pki {
  caCert: string;
  servingCert: string;
  servingKey: string;
  adminCert: string;
  adminKey: string;
  /** Client certificates by identity: the node's components and the API server towards kubelets. */
  clients: Record<ClientIdentity, { cert: string; key: string }>;
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
  // A positive DER INTEGER in its minimal form, as Go's x509 demands ("malformed serial number"
  // otherwise): the first byte 0x40-0x7f, so neither a sign bit nor a leading zero byte.
  const serial = randomBytes(16);
  serial[0] = 0x40 | (serial[0]! & 0x3f);
  cert.serialNumber = serial.toString('hex');
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

/** Who the node's components are to the API server, and who the API server is to the kubelet. */
const CLIENT_SUBJECTS = {
  kubelet: { cn: `system:node:${NODE_NAME}`, o: 'system:nodes' },
  kubeProxy: { cn: 'system:kube-proxy' },
  kubeScheduler: { cn: 'system:kube-scheduler' },
  apiserverKubeletClient: { cn: 'kube-apiserver-kubelet-client', o: 'system:masters' },
} as const;
export type ClientIdentity = keyof typeof CLIENT_SUBJECTS;

type Issuer = NonNullable<CertSpec['issuer']>;

function clientCert(issuer: Issuer, cn: string, o?: string): { cert: forge.pki.Certificate; keys: KeyPair } {
  const keys = rsaKeyPair();
  const subject: forge.pki.CertificateField[] = [{ name: 'commonName', value: cn }];
  if (o) subject.push({ name: 'organizationName', value: o });
  const cert = makeCert({
    subject,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
      { name: 'extKeyUsage', clientAuth: true },
    ],
    keys,
    issuer,
  });
  return { cert, keys };
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
          { type: 7, ip: KUBERNETES_SERVICE_IP },
          { type: 7, ip: NODE_IP },
        ],
      },
    ],
    keys: servingKeys,
    issuer,
  });

  const admin = clientCert(issuer, 'admin', 'system:masters');
  const pem = (c: forge.pki.Certificate): string => forge.pki.certificateToPem(c);
  const clients = Object.fromEntries(
    Object.entries(CLIENT_SUBJECTS).map(([id, subject]) => {
      const c = clientCert(issuer, subject.cn, 'o' in subject ? subject.o : undefined);
      return [id, { cert: pem(c.cert), key: c.keys.privatePem }];
    }),
  ) as Pki['clients'];

  const saKeys = rsaKeyPair();
  return {
    caCert: pem(ca),
    servingCert: pem(serving),
    servingKey: servingKeys.privatePem,
    adminCert: pem(admin.cert),
    adminKey: admin.keys.privatePem,
    clients,
    serviceAccountKey: saKeys.privatePem,
    serviceAccountPub: saKeys.publicPem,
  };
}
