/**
 * Per-group dynamic configs (issue 24, Kafka 4.0's GROUP config resource, type 32) against one
 * broker: DescribeConfigs with the broker's values as DEFAULT_CONFIG where the group sets none,
 * IncrementalAlterConfigs set and delete, Kafka's INVALID_CONFIG messages for bad values (the
 * stored configs unchanged), consumer-protocol members' heartbeat interval and session timeout
 * following the group's configs at their next heartbeat (another group unaffected), the configs
 * kept across a restart, and kafka-configs.sh --entity-type groups as a user runs it (built
 * tools: needs `npx tsc -p tsconfig.json` first).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Admin, ConfigResourceType } from '../../../src/client/index.js';
import { ErrorCode, KafkaError } from '../../../src/protocol/errors.js';
import {
  ConsumerGroupDescribeRequestCodec,
  ConsumerGroupDescribeResponseCodec,
  ConsumerGroupHeartbeatRequestCodec,
  ConsumerGroupHeartbeatResponseCodec,
  FindCoordinatorRequestCodec,
  FindCoordinatorResponseCodec,
} from '../../../src/protocol/messages/index.js';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { RawClient } from '../../helpers/raw-client.js';
import { GroupConfigStore, ZkGroupConfigBackend, type GroupConfigZk } from '../../../src/server/admin/group-config-store.js';
import { run } from '../../helpers/run.js';

const CONFIGS = fileURLToPath(new URL('../../../bin/kafka-configs.sh', import.meta.url));
const configsTool = (...args: string[]) => run(CONFIGS, args, { timeoutMs: 30_000 });
const SESSION = 'consumer.session.timeout.ms';
const HEARTBEAT = 'consumer.heartbeat.interval.ms';
// Bounds low enough that a member's session can time out within the test.
const PROPS = { 'offsets.topic.num.partitions': '1', 'group.consumer.min.session.timeout.ms': '1000', 'group.consumer.min.heartbeat.interval.ms': '500' };

let dir: string;
let b: TestBroker;
let c: RawClient;
let admin: Admin;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fjord-group-configs-'));
  b = await startTestBroker(PROPS, dir);
  c = await RawClient.connect(b.port);
  admin = new Admin({ bootstrapServers: b.bootstrap, enableMetricsPush: false });
  await b.broker.services.metadata.createTopic({ name: 't', numPartitions: 2, replicationFactor: 1 });
  await c.request(10, FindCoordinatorRequestCodec, FindCoordinatorResponseCodec, 4, { keyType: 0, coordinatorKeys: ['g'] });
  await b.broker.services.groupCoordinator.loaded();
});

after(async () => {
  c?.close();
  await admin?.close();
  await b?.stop();
  await rm(dir, { recursive: true, force: true });
});

const describe = async (group: string) =>
  Object.fromEntries(
    (await admin.describeConfigs(ConfigResourceType.Group, group)).map((e) => [e.name, { value: e.value, source: e.source, synonyms: e.synonyms.length }]),
  );
const set = (group: string, entries: Record<string, string>) =>
  admin.alterConfigs(
    ConfigResourceType.Group,
    group,
    Object.entries(entries).map(([name, value]) => ({ name, op: 'set' as const, value })),
  );

const heartbeat = (groupId: string, memberId: string, memberEpoch: number) =>
  c.request(68, ConsumerGroupHeartbeatRequestCodec, ConsumerGroupHeartbeatResponseCodec, 1, {
    groupId,
    memberId,
    memberEpoch,
    rebalanceTimeoutMs: memberEpoch === 0 ? 30_000 : -1,
    subscribedTopicNames: memberEpoch === 0 ? ['t'] : null,
    topicPartitions: memberEpoch === 0 ? [] : null,
  });

test("DescribeConfigs: the broker values as DEFAULT_CONFIG; the group's own as GROUP_CONFIG once set; delete restores the default", async () => {
  assert.deepEqual(await describe('fresh'), {
    [SESSION]: { value: '45000', source: 5, synonyms: 0 },
    [HEARTBEAT]: { value: '5000', source: 5, synonyms: 0 },
  });
  await set('fresh', { [SESSION]: '30000' });
  assert.deepEqual(await describe('fresh'), {
    [SESSION]: { value: '30000', source: 8, synonyms: 1 },
    [HEARTBEAT]: { value: '5000', source: 5, synonyms: 0 },
  });
  // Only the keys asked for.
  assert.deepEqual(
    (await admin.describeConfigs(ConfigResourceType.Group, 'fresh', [HEARTBEAT])).map((e) => e.name),
    [HEARTBEAT],
  );
  await admin.alterConfigs(ConfigResourceType.Group, 'fresh', [{ name: SESSION, op: 'delete' }]);
  assert.equal((await describe('fresh'))[SESSION]!.source, 5);
});

test("bad values: INVALID_CONFIG with Kafka's words, nothing stored", async () => {
  await set('strict', { [HEARTBEAT]: '2000' });
  const cases: [Record<string, string>, string][] = [
    [{ [HEARTBEAT]: '100' }, 'consumer.heartbeat.interval.ms must be greater than or equal to group.consumer.min.heartbeat.interval.ms'],
    [{ [HEARTBEAT]: '20000' }, 'consumer.heartbeat.interval.ms must be less than or equal to group.consumer.max.heartbeat.interval.ms'],
    [{ [SESSION]: '999' }, 'consumer.session.timeout.ms must be greater than or equal to group.consumer.min.session.timeout.ms'],
    [{ [SESSION]: '60001' }, 'consumer.session.timeout.ms must be less than or equal to group.consumer.max.session.timeout.ms'],
    [{ [SESSION]: '2000' }, 'consumer.session.timeout.ms must be greater than consumer.heartbeat.interval.ms'],
    [{ [SESSION]: 'soon' }, 'Invalid value soon for configuration consumer.session.timeout.ms: Not a number of type INT'],
    [{ [SESSION]: '0' }, 'Invalid value 0 for configuration consumer.session.timeout.ms: Value must be at least 1'],
    [{ 'share.session.timeout.ms': '45000' }, 'Unknown group config name: share.session.timeout.ms'],
  ];
  for (const [entries, message] of cases) {
    await assert.rejects(set('strict', entries), (err: unknown) => {
      assert.ok(err instanceof KafkaError);
      assert.equal(err.code, ErrorCode.INVALID_CONFIG, JSON.stringify(entries));
      assert.equal(err.message, message);
      return true;
    });
  }
  assert.deepEqual(await describe('strict'), {
    [SESSION]: { value: '45000', source: 5, synonyms: 0 },
    [HEARTBEAT]: { value: '2000', source: 8, synonyms: 1 },
  });
});

test("a member's next heartbeat gets its group's interval; the session timeout follows too; other groups keep the broker's", async () => {
  let r = await heartbeat('g', 'm1', 0);
  assert.equal(r.errorCode, ErrorCode.NONE, r.errorMessage ?? '');
  assert.equal(r.heartbeatIntervalMs, 5000);
  const other = await heartbeat('other', 'o1', 0);
  assert.equal(other.heartbeatIntervalMs, 5000);

  await set('g', { [HEARTBEAT]: '800', [SESSION]: '1500' });
  // The session restarts at this heartbeat, after this instant.
  const beatAt = Date.now();
  r = await heartbeat('g', 'm1', r.memberEpoch);
  assert.equal(r.errorCode, ErrorCode.NONE, r.errorMessage ?? '');
  assert.equal(r.heartbeatIntervalMs, 800);
  assert.equal((await heartbeat('other', 'o1', other.memberEpoch)).heartbeatIntervalMs, 5000);

  // m1 stops heartbeating: its session (1.5 s, not the broker's 45 s) ends and it is removed,
  // while the other group's member, silent as long, stays.
  const deadline = beatAt + 15_000;
  for (;;) {
    const d = await c.request(69, ConsumerGroupDescribeRequestCodec, ConsumerGroupDescribeResponseCodec, 0, {
      groupIds: ['g', 'other'],
      includeAuthorizedOperations: false,
    });
    const [g, o] = d.groups;
    if (g!.members.length === 0) {
      assert.ok(Date.now() - beatAt >= 1450, 'removed before its session could end');
      assert.equal(o!.members.length, 1);
      break;
    }
    assert.ok(Date.now() < deadline, 'the member was never removed');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }

  await admin.alterConfigs(ConfigResourceType.Group, 'g', [
    { name: HEARTBEAT, op: 'delete' },
    { name: SESSION, op: 'delete' },
  ]);
  r = await heartbeat('g', 'm2', 0);
  assert.equal(r.heartbeatIntervalMs, 5000);
});

test('kafka-configs.sh --entity-type groups: alter, describe (one group, --all, every group), refused values, unknown deletes', async () => {
  const bs = ['--bootstrap-server', b.bootstrap];
  const entity = ['--entity-type', 'groups', '--entity-name', 'tool'];
  let r = await configsTool(...bs, ...entity, '--alter', '--add-config', `${SESSION}=50000,${HEARTBEAT}=6000`);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.equal(r.stdout, 'Completed updating config for group tool.\n');

  r = await configsTool(...bs, ...entity, '--describe');
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    r.stdout,
    [
      'Dynamic configs for group tool are:',
      `  ${SESSION}=50000 sensitive=false synonyms={GROUP_CONFIG:${SESSION}=50000}`,
      `  ${HEARTBEAT}=6000 sensitive=false synonyms={GROUP_CONFIG:${HEARTBEAT}=6000}`,
      '',
    ].join('\n'),
  );

  r = await configsTool(...bs, ...entity, '--alter', '--delete-config', `${HEARTBEAT},nope`);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /Invalid config\(s\): nope/);
  r = await configsTool(...bs, ...entity, '--alter', '--add-config', `${HEARTBEAT}=1`);
  assert.equal(r.code, 1);
  assert.match(r.stdout + r.stderr, /consumer\.heartbeat\.interval\.ms must be greater than or equal to group\.consumer\.min\.heartbeat\.interval\.ms/);
  assert.equal((r.stdout + r.stderr).trim().split('\n').length, 1, `one line: ${r.stdout}${r.stderr}`);
  assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');

  r = await configsTool(...bs, ...entity, '--alter', '--delete-config', HEARTBEAT);
  assert.equal(r.code, 0, r.stderr);
  r = await configsTool(...bs, ...entity, '--describe', '--all');
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^All configs for group tool are:\n/);
  assert.match(r.stdout, new RegExp(`^  ${HEARTBEAT}=5000 sensitive=false synonyms=\\{\\}$`, 'm'));
  assert.match(r.stdout, new RegExp(`^  ${SESSION}=50000 sensitive=false`, 'm'));

  // No --entity-name: every group the broker lists ('g' and 'other' have members).
  r = await configsTool(...bs, '--entity-type', 'groups', '--describe');
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^Dynamic configs for group g are:$/m);
  assert.match(r.stdout, /^Dynamic configs for group other are:$/m);
});

test('the configs are kept across a restart', async () => {
  await set('kept', { [SESSION]: '40000' });
  c.close();
  await admin.close();
  await b.stop();
  b = await startTestBroker(PROPS, dir);
  c = await RawClient.connect(b.port);
  admin = new Admin({ bootstrapServers: b.bootstrap, enableMetricsPush: false });
  assert.deepEqual((await describe('kept'))[SESSION], { value: '40000', source: 8, synonyms: 1 });
});

test('ZooKeeper: /config/groups/<group> znodes, names URL-encoded; a change another broker announced is re-read; a bad stored value is ignored', async () => {
  const znodes = new Map<string, Record<string, string>>([
    ['a%2Fb', { [SESSION]: '30000' }],
    ['bad', { [HEARTBEAT]: 'often' }],
  ]);
  const zk: GroupConfigZk = {
    getEntityConfigs: async (type, name) => ({ ...(type === 'groups' ? (znodes.get(name) ?? {}) : {}) }),
    setEntityConfigs: async (type, name, configs) => void (type === 'groups' && znodes.set(name, { ...configs })),
    getConfigChildren: async (sub) => (sub === 'groups' ? [...znodes.keys()] : []),
  };
  const ignored: string[] = [];
  const store = await GroupConfigStore.open(new ZkGroupConfigBackend(zk), (group) => ignored.push(group));
  assert.deepEqual(store.get('a/b'), { [SESSION]: '30000' });
  assert.deepEqual(store.lookup('a/b'), { sessionTimeoutMs: 30000 });
  assert.deepEqual(ignored, ['bad']);
  assert.equal(store.lookup('bad'), undefined);
  await store.set('x y', { [HEARTBEAT]: '3000' });
  assert.deepEqual(znodes.get('x%20y'), { [HEARTBEAT]: '3000' });
  znodes.set('a%2Fb', { [SESSION]: '50000' });
  await store.reload('a/b');
  assert.deepEqual(store.lookup('a/b'), { sessionTimeoutMs: 50000 });
});
