/**
 * Test certificates made with `openssl` in a temporary directory: a CA, a broker certificate for
 * localhost / 127.0.0.1, and client certificates with chosen subjects. Each identity is written
 * as Kafka's PEM key store wants it (private key and certificate chain in one file) and as
 * separate key / certificate files; the CA as a PEM trust store.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TlsIdentity {
  /** PEM key store: the private key followed by the certificate chain (Kafka's PEM keystore file). */
  keystore: string;
  keyFile: string;
  certFile: string;
  key: string;
  cert: string;
  /** The subject as given to openssl (-subj form), e.g. /C=US/O=Acme/OU=eng/CN=bob. */
  subject: string;
}

export interface TestCerts {
  dir: string;
  /** The CA certificate (PEM trust store file). */
  caFile: string;
  ca: string;
  broker: TlsIdentity;
  /** Issues a client certificate signed by the CA (or self-signed with `selfSigned`). */
  client(name: string, subject: string, opts?: { selfSigned?: boolean; keyPassword?: string }): TlsIdentity;
  /** Issues another broker-style certificate (SAN localhost / 127.0.0.1) signed by the CA. */
  server(name: string, subject: string): TlsIdentity;
  cleanup(): void;
}

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: ['ignore', 'ignore', 'pipe'] });
}

export function makeTestCerts(): TestCerts {
  const dir = mkdtempSync(join(tmpdir(), 'fjord-tls-'));
  const caKey = join(dir, 'ca.key');
  const caFile = join(dir, 'ca.pem');
  openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', caKey, '-out', caFile, '-days', '2', '-subj', '/O=Fjord Test/CN=Fjord Test CA'], dir);

  const issue = (name: string, subject: string, opts: { selfSigned?: boolean; keyPassword?: string; serverSan?: boolean }): TlsIdentity => {
    const keyFile = join(dir, `${name}.key`);
    const certFile = join(dir, `${name}.crt`);
    const csr = join(dir, `${name}.csr`);
    const ext = join(dir, `${name}.ext`);
    writeFileSync(
      ext,
      opts.serverSan ? 'subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n' : 'extendedKeyUsage=clientAuth,serverAuth\n',
    );
    openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', csr, '-subj', subject], dir);
    if (opts.selfSigned) {
      openssl(['x509', '-req', '-in', csr, '-signkey', keyFile, '-out', certFile, '-days', '2', '-extfile', ext], dir);
    } else {
      openssl(['x509', '-req', '-in', csr, '-CA', caFile, '-CAkey', caKey, '-CAcreateserial', '-out', certFile, '-days', '2', '-extfile', ext], dir);
    }
    if (opts.keyPassword !== undefined) {
      const encrypted = join(dir, `${name}.enc.key`);
      openssl(['pkcs8', '-topk8', '-in', keyFile, '-out', encrypted, '-passout', `pass:${opts.keyPassword}`, '-v2', 'aes-256-cbc'], dir);
      writeFileSync(keyFile, readFileSync(encrypted));
    }
    const key = readFileSync(keyFile, 'utf8');
    const cert = readFileSync(certFile, 'utf8');
    const keystore = join(dir, `${name}.keystore.pem`);
    writeFileSync(keystore, key + cert);
    return { keystore, keyFile, certFile, key, cert, subject };
  };

  return {
    dir,
    caFile,
    ca: readFileSync(caFile, 'utf8'),
    broker: issue('broker', '/O=Fjord Test/CN=localhost', { serverSan: true }),
    client: (name, subject, opts = {}) => issue(name, subject, opts),
    server: (name, subject) => issue(name, subject, { serverSan: true }),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
