import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { subjectRfc2253 } from '../../../src/security/tls/x500.js';
import { makeTestCerts } from '../../helpers/tls-certs.js';

const certs = makeTestCerts();
after(() => certs.cleanup());

const subjectOf = (subject: string): string => {
  const id = certs.client(`c${Math.random().toString(36).slice(2, 8)}`, subject);
  return subjectRfc2253(new X509Certificate(id.cert).raw);
};

// What Java's X500Principal.getName() (RFC 2253) gives, the string Kafka maps to a principal.
test('subject in RFC 2253 order (most specific first) with Java keywords', () => {
  assert.equal(subjectOf('/C=US/O=Acme/OU=eng/CN=bob'), 'CN=bob,OU=eng,O=Acme,C=US');
  assert.equal(subjectOf('/C=US/ST=CA/L=Palo Alto/O=Acme Inc/CN=alice'), 'CN=alice,O=Acme Inc,L=Palo Alto,ST=CA,C=US');
  assert.equal(subjectOf('/DC=com/DC=example/UID=u1/CN=x'), 'CN=x,UID=u1,DC=example,DC=com');
});

test('special characters are escaped as Java does (also = and #), leading and trailing spaces too', () => {
  assert.equal(subjectOf('/O=a,b\\+c=d/CN=#x;y<z>"q\\\\'), 'CN=\\#x\\;y\\<z\\>\\"q\\\\,O=a\\,b\\+c\\=d');
});

test('attributes without an RFC 2253 keyword are written as OID=#hex of their DER value', () => {
  assert.equal(subjectOf('/CN=bob/emailAddress=bob@x.io'), '1.2.840.113549.1.9.1=#1608626f6240782e696f,CN=bob');
});

test('multi-valued RDNs are joined with +', () => {
  assert.equal(subjectOf('/O=Acme/CN=bob+OU=eng'), 'CN=bob+OU=eng,O=Acme');
});
