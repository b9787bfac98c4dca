import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { mkdtemp, rm, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AclIndex, decideOver } from '../../src/security/authorizer/acl-index.js';
import {
  AclOperation as Op,
  AclPermissionType as Perm,
  PatternType,
  ResourceType as RT,
  CONCRETE_OPERATIONS,
  formatPattern,
  formatEntry,
  parseOperation,
  operationPascal,
  resourceTypePascal,
  bindingProblem,
  type AccessControlEntry,
  type AclBinding,
} from '../../src/security/authorizer/acl-model.js';
import { Authorizer, parseSuperUsers } from '../../src/security/authorizer/authorizer.js';
import { EmbeddedAcls } from '../../src/metadata/embedded/embedded-acls.js';
import { userPrincipal } from '../../src/security/principal.js';

const allow = (principal: string, operation: Op, host = '*'): AccessControlEntry => ({ principal, host, operation, permissionType: Perm.ALLOW });
const deny = (principal: string, operation: Op, host = '*'): AccessControlEntry => ({ principal, host, operation, permissionType: Perm.DENY });
const topic = (name: string, patternType = PatternType.LITERAL) => ({ resourceType: RT.TOPIC, name, patternType });

test("codes and names are Kafka's", () => {
  assert.equal(Op.READ, 3);
  assert.equal(Op.IDEMPOTENT_WRITE, 12);
  assert.equal(Op.DESCRIBE_TOKENS, 14);
  assert.equal(RT.TOPIC, 2);
  assert.equal(RT.TRANSACTIONAL_ID, 5);
  assert.equal(RT.USER, 7);
  assert.equal(PatternType.LITERAL, 3);
  assert.equal(PatternType.PREFIXED, 4);
  assert.equal(Perm.DENY, 2);
  assert.equal(Perm.ALLOW, 3);
  assert.equal(operationPascal(Op.DESCRIBE_CONFIGS), 'DescribeConfigs');
  assert.equal(resourceTypePascal(RT.TRANSACTIONAL_ID), 'TransactionalId');
  assert.equal(parseOperation('DescribeConfigs'), Op.DESCRIBE_CONFIGS);
  assert.equal(parseOperation('idempotent-write'), Op.IDEMPOTENT_WRITE);
  assert.equal(formatPattern(topic('orders')), 'ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)');
  assert.equal(formatEntry(allow('User:bob', Op.READ)), '(principal=User:bob, host=*, operation=READ, permissionType=ALLOW)');
  assert.deepEqual(parseSuperUsers('User:admin; User:broker;'), ['User:admin', 'User:broker']);
  assert.match(
    bindingProblem({ pattern: { resourceType: RT.CLUSTER, name: 'x', patternType: PatternType.LITERAL }, entry: allow('User:a', Op.ALTER) }) ?? '',
    /kafka-cluster/,
  );
  assert.equal(bindingProblem({ pattern: topic('*', PatternType.PREFIXED), entry: allow('User:a', Op.READ) }) !== undefined, true);
});

test('examples: literal, wildcard, prefix, deny wins, implied describe, wildcard principal and host', () => {
  const idx = new AclIndex([
    { pattern: topic('orders'), entry: allow('User:bob', Op.WRITE) },
    { pattern: topic('team-', PatternType.PREFIXED), entry: allow('User:alice', Op.READ) },
    { pattern: topic('team-secret'), entry: deny('User:alice', Op.READ) },
    { pattern: topic('*'), entry: allow('User:*', Op.DESCRIBE, '10.0.0.1') },
  ]);
  const d = (p: string, op: Op, name: string, host = '127.0.0.1') => idx.decide(p, host, op, RT.TOPIC, name, false);
  assert.equal(d('User:bob', Op.WRITE, 'orders'), 'ALLOWED');
  assert.equal(d('User:bob', Op.READ, 'orders'), 'DENIED');
  assert.equal(d('User:bob', Op.DESCRIBE, 'orders'), 'ALLOWED', 'WRITE implies DESCRIBE');
  assert.equal(d('User:alice', Op.READ, 'team-a'), 'ALLOWED');
  assert.equal(d('User:alice', Op.READ, 'team-secret'), 'DENIED', 'deny wins');
  assert.equal(d('User:alice', Op.DESCRIBE, 'team-secret'), 'ALLOWED', 'a DENY of READ does not deny DESCRIBE, which the prefixed READ implies (Kafka)');
  assert.equal(d('User:carol', Op.DESCRIBE, 'anything', '10.0.0.1'), 'ALLOWED', 'User:* from 10.0.0.1');
  assert.equal(d('User:carol', Op.DESCRIBE, 'anything', '10.0.0.2'), 'DENIED');
  // allow.everyone.if.no.acl.found only where no ACL applies at all
  const empty = new AclIndex([{ pattern: topic('orders'), entry: allow('User:bob', Op.WRITE) }]);
  assert.equal(empty.decide('User:x', '*', Op.READ, RT.TOPIC, 'other', true), 'ALLOWED');
  assert.equal(empty.decide('User:x', '*', Op.READ, RT.TOPIC, 'orders', true), 'DENIED');
  assert.equal(empty.decide('User:x', '*', Op.READ, RT.TOPIC, 'other', false), 'DENIED');
  assert.equal(decideOver([allow('User:a', Op.ALTER_CONFIGS)], 'User:a', 'h', Op.DESCRIBE_CONFIGS, false), 'ALLOWED');
  assert.equal(decideOver([allow('User:a', Op.ALL)], 'User:a', 'h', Op.CLUSTER_ACTION, false), 'ALLOWED');
  assert.equal(decideOver([allow('User:a', Op.ALL), deny('User:*', Op.ALL)], 'User:a', 'h', Op.READ, false), 'DENIED');
});

// Property tests of the rules, over small alphabets so collisions happen.
const principalArb = fc.constantFrom('User:a', 'User:b', 'User:*');
const hostArb = fc.constantFrom('h1', 'h2', '*');
const opArb = fc.constantFrom(...CONCRETE_OPERATIONS);
const entryArb = fc.record({ principal: principalArb, host: hostArb, operation: opArb, permissionType: fc.constantFrom(Perm.ALLOW, Perm.DENY) });
const askOp = fc.constantFrom(...CONCRETE_OPERATIONS.filter((o) => o !== Op.ALL));
const applies = (e: AccessControlEntry, p: string, h: string) => (e.principal === p || e.principal === 'User:*') && (e.host === h || e.host === '*');

test('property: a matching DENY always wins', () => {
  fc.assert(
    fc.property(fc.array(entryArb), fc.constantFrom('User:a', 'User:b'), fc.constantFrom('h1', 'h2'), askOp, (acls, p, h, op) => {
      const denied = acls.some((e) => e.permissionType === Perm.DENY && applies(e, p, h) && (e.operation === op || e.operation === Op.ALL));
      if (denied) assert.equal(decideOver(acls, p, h, op, true), 'DENIED');
    }),
  );
});

test('property: allowed only through a matching ALLOW (or no ACL and allow-everyone); implied operations grant DESCRIBE and DESCRIBE_CONFIGS', () => {
  fc.assert(
    fc.property(fc.array(entryArb), fc.constantFrom('User:a', 'User:b'), fc.constantFrom('h1', 'h2'), askOp, fc.boolean(), (acls, p, h, op, everyone) => {
      const result = decideOver(acls, p, h, op, everyone);
      if (acls.length === 0) {
        assert.equal(result, everyone ? 'ALLOWED' : 'DENIED');
        return;
      }
      const implied = op === Op.DESCRIBE ? [Op.READ, Op.WRITE, Op.DELETE, Op.ALTER] : op === Op.DESCRIBE_CONFIGS ? [Op.ALTER_CONFIGS] : [];
      const denied = acls.some((e) => e.permissionType === Perm.DENY && applies(e, p, h) && (e.operation === op || e.operation === Op.ALL));
      const granted = acls.some(
        (e) => e.permissionType === Perm.ALLOW && applies(e, p, h) && (e.operation === op || e.operation === Op.ALL || implied.includes(e.operation)),
      );
      assert.equal(result, !denied && granted ? 'ALLOWED' : 'DENIED');
    }),
  );
});

test('property: the index finds literal, wildcard and prefix ACLs exactly', () => {
  const nameArb = fc.constantFrom('a', 'ab', 'abc', 'b', '*');
  const bindingArb = fc
    .record({
      pattern: fc.record({
        resourceType: fc.constantFrom(RT.TOPIC, RT.GROUP),
        name: nameArb,
        patternType: fc.constantFrom(PatternType.LITERAL, PatternType.PREFIXED),
      }),
      entry: entryArb,
    })
    .filter((b) => !(b.pattern.patternType === PatternType.PREFIXED && b.pattern.name === '*'));
  fc.assert(
    fc.property(fc.array(bindingArb), fc.constantFrom('a', 'ab', 'abc', 'b', 'c'), (bindings: AclBinding[], name) => {
      const idx = new AclIndex(bindings);
      const expected = new Set<string>();
      const seen = new Set<string>();
      for (const b of bindings) {
        const k = JSON.stringify(b);
        if (seen.has(k)) continue;
        seen.add(k);
        if (b.pattern.resourceType !== RT.TOPIC) continue;
        const hit = b.pattern.patternType === PatternType.LITERAL ? b.pattern.name === name || b.pattern.name === '*' : name.startsWith(b.pattern.name);
        if (hit) expected.add(JSON.stringify(b.entry));
      }
      const got = new Set(idx.matching(RT.TOPIC, name).map((e) => JSON.stringify(e)));
      assert.deepEqual([...got].sort(), [...expected].sort());
    }),
  );
});

test('authorizer: super users, cache dropped on change, persistence in the embedded file', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'fjord-acl-'));
  try {
    const a = await Authorizer.open({ storage: new EmbeddedAcls(dir), superUsers: parseSuperUsers('User:admin'), allowEveryoneIfNoAclFound: false });
    const bob = userPrincipal('bob');
    assert.equal(a.authorize(userPrincipal('admin'), 'h', Op.READ, RT.TOPIC, 'orders'), true);
    assert.equal(a.authorize(bob, 'h', Op.WRITE, RT.TOPIC, 'orders'), false);
    const res = await a.create([
      { pattern: topic('orders'), entry: allow('User:bob', Op.WRITE) },
      { pattern: topic('orders'), entry: allow('User:bob', Op.WRITE) },
      { pattern: { resourceType: RT.CLUSTER, name: 'nope', patternType: PatternType.LITERAL }, entry: allow('User:bob', Op.ALTER) },
    ]);
    assert.equal(res[0], undefined);
    assert.equal(res[1], undefined);
    assert.ok(res[2]);
    assert.equal(a.authorize(bob, 'h', Op.WRITE, RT.TOPIC, 'orders'), true, 'cache dropped after create');
    const file = JSON.parse(await readFile(join(dir, 'fjord-acls.json'), 'utf8'));
    assert.deepEqual(file.resources[0].acls, [{ principal: 'User:bob', permissionType: 'Allow', operation: 'Write', host: '*' }]);
    const b = await Authorizer.open({ storage: new EmbeddedAcls(dir), superUsers: [], allowEveryoneIfNoAclFound: false });
    assert.equal(b.authorize(bob, 'h', Op.WRITE, RT.TOPIC, 'orders'), true, 'survives a reopen');
    assert.equal(b.authorizeByResourceType(bob, 'h', Op.WRITE, RT.TOPIC), true);
    assert.equal(b.authorizeByResourceType(userPrincipal('eve'), 'h', Op.WRITE, RT.TOPIC), false);
    const del = await b.delete([
      {
        pattern: { resourceType: RT.ANY, name: null, patternType: PatternType.ANY },
        entry: { principal: 'User:bob', host: null, operation: Op.ANY, permissionType: Perm.ANY },
      },
    ]);
    assert.equal(del[0]!.deleted.length, 1);
    assert.equal(b.authorize(bob, 'h', Op.WRITE, RT.TOPIC, 'orders'), false);
    assert.equal(
      b.describe({
        pattern: { resourceType: RT.ANY, name: null, patternType: PatternType.ANY },
        entry: { principal: null, host: null, operation: Op.ANY, permissionType: Perm.ANY },
      }).length,
      0,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("a denial is logged at info in Kafka's authorizer words; grants only at debug", async () => {
  const { default: pino } = await import('pino');
  const { Writable } = await import('node:stream');
  const lines: { level: number; msg: string }[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      cb();
    },
  });
  const logger = pino({ level: 'info' }, sink);
  const dir = await mkdtemp(join(tmpdir(), 'fjord-acl-'));
  try {
    const a = await Authorizer.open({ storage: new EmbeddedAcls(dir), superUsers: [], allowEveryoneIfNoAclFound: false, logger });
    await a.create([{ pattern: topic('orders'), entry: allow('User:bob', Op.WRITE) }]);
    a.authorize(userPrincipal('bob'), '10.0.0.5', Op.WRITE, RT.TOPIC, 'orders', 'Produce');
    a.authorize(userPrincipal('bob'), '10.0.0.5', Op.READ, RT.TOPIC, 'orders', 'Fetch');
    a.authorize(userPrincipal('bob'), '10.0.0.5', Op.READ, RT.TOPIC, 'orders', 'Fetch', false);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(
      lines.map((l) => [l.level, l.msg]),
      [
        [
          30,
          'Principal = User:bob is Denied Operation = Read from host = 10.0.0.5 on resource = Topic:LITERAL:orders for request = Fetch with resourceRefCount = 1',
        ],
      ],
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
