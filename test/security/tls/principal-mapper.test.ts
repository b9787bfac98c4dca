import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SslPrincipalMapper, SslPrincipalMappingError } from '../../../src/security/tls/principal-mapper.js';

// The examples of Kafka's documentation (security: "Customizing SSL User Name").
test('Kafka documented rules: ServiceUsers, lower-cased CN@OU, any CN, DEFAULT', () => {
  const m = SslPrincipalMapper.fromRules(
    'RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L,RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L,DEFAULT',
  );
  assert.equal(m.getName('CN=serviceuser,OU=ServiceUsers,O=Unknown,L=Unknown,ST=Unknown,C=Unknown'), 'serviceuser');
  assert.equal(m.getName('CN=adminUser,OU=Admin,O=Unknown,L=Unknown,ST=Unknown,C=Unknown'), 'adminuser@admin');
  assert.equal(m.getName('OU=JavaSoft,O=Sun Microsystems,C=US,CN=Duke'), 'duke');
  assert.equal(m.getName('OU=JavaSoft,O=Sun Microsystems,C=US'), 'OU=JavaSoft,O=Sun Microsystems,C=US');
});

test('DEFAULT (and an unset value) keeps the distinguished name as it is', () => {
  assert.equal(SslPrincipalMapper.fromRules('DEFAULT').getName('CN=bob,OU=eng,O=Acme,C=US'), 'CN=bob,OU=eng,O=Acme,C=US');
  assert.equal(SslPrincipalMapper.fromRules(null).getName('CN=bob'), 'CN=bob');
});

test('U upper-cases, spaces around rules are ignored, rules apply in order', () => {
  const m = SslPrincipalMapper.fromRules('  RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U ,  RULE:^CN=(.*?),.*$/$1/  ');
  assert.equal(m.getName('cn=duke,ou=JavaSoft,dc=example,dc=com'), 'DUKE@JAVASOFT');
  assert.equal(m.getName('CN=alice,O=x'), 'alice');
});

test('no rule matching throws (Kafka: NoMatchingRule), so the connection is refused', () => {
  const m = SslPrincipalMapper.fromRules('RULE:^CN=(.*?),OU=eng$/$1/');
  assert.throws(() => m.getName('CN=bob,OU=ops'), SslPrincipalMappingError);
});

test('escaped slashes in pattern and replacement; a back reference past the groups is literal', () => {
  const m = SslPrincipalMapper.fromRules('RULE:^CN=([^,]*)\\/x$/a\\/$1$2/');
  assert.equal(m.getName('CN=bob/x'), 'a/bob$2');
});

test('invalid rules are refused with the rule named', () => {
  assert.throws(() => SslPrincipalMapper.fromRules('RULE:^CN=(.*)$/$1/L,NOTARULE'), /Invalid rule/);
  assert.throws(() => SslPrincipalMapper.fromRules('RULE:^CN=(.*$/$1/'), /Invalid rule|pattern/);
  assert.throws(() => SslPrincipalMapper.fromRules('RULE:^CN=(.*)$/$1/X'), /Invalid rule/);
});

test("Java's leading (?i) makes a rule case-insensitive", () => {
  const m = SslPrincipalMapper.fromRules('RULE:(?i)^cn=([^,]*),.*$/$1/');
  assert.equal(m.getName('CN=Bob,O=x'), 'Bob');
});
