/**
 * ListGroups v0-v5 (states and types filters, GroupType), the admin client's filtered listing,
 * and bin/kafka-groups.sh (Kafka 4's GroupsCommand) as a user runs it, over one broker holding
 * a classic consumer group, a Connect-style group and a simple (commit-only) group. Needs
 * `npx tsc -p tsconfig.json` first.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { RawClient } from '../helpers/raw-client.js';
import { run } from '../helpers/run.js';
import { createTopic } from '../server/handlers/data-plane-helpers.js';
import { Admin } from '../../src/client/index.js';
import {
  FindCoordinatorRequestCodec,
  FindCoordinatorResponseCodec,
  JoinGroupRequestCodec,
  JoinGroupResponseCodec,
  ListGroupsRequestCodec,
  ListGroupsResponseCodec,
  OffsetCommitRequestCodec,
  OffsetCommitResponseCodec,
  SyncGroupRequestCodec,
  SyncGroupResponseCodec,
} from '../../src/protocol/messages/index.js';

const TOOL = fileURLToPath(new URL('../../bin/kafka-groups.sh', import.meta.url));
const RUN_CLASS = fileURLToPath(new URL('../../bin/kafka-run-class.sh', import.meta.url));
const groupsTool = (...args: string[]) => run(TOOL, args, { timeoutMs: 30_000 });

const CONSUMERS = 'orders-app';
const CONNECT = 'connect-cluster-with-a-long-group-id';
const SIMPLE = 'simple';

let b: TestBroker;
let c: RawClient;
before(async () => {
  b = await startTestBroker({ 'auto.create.topics.enable': 'false', 'offsets.topic.num.partitions': '1' });
  c = await RawClient.connect(b.port);
  await createTopic(b, 'orders', 1);
  await c.request(10, FindCoordinatorRequestCodec, FindCoordinatorResponseCodec, 1, { key: CONSUMERS, keyType: 0 });
  await b.broker.services.groupCoordinator.loaded();
  for (const [groupId, protocolType] of [
    [CONSUMERS, 'consumer'],
    [CONNECT, 'connect'],
  ] as const) {
    const join = await c.request(11, JoinGroupRequestCodec, JoinGroupResponseCodec, 7, {
      groupId,
      sessionTimeoutMs: 30000,
      rebalanceTimeoutMs: 30000,
      memberId: '',
      groupInstanceId: 'static-1',
      protocolType,
      protocols: [{ name: 'range', metadata: Buffer.alloc(0) }],
    });
    assert.equal(join.errorCode, 0);
    const sync = await c.request(14, SyncGroupRequestCodec, SyncGroupResponseCodec, 5, {
      groupId,
      generationId: join.generationId,
      memberId: join.memberId,
      groupInstanceId: 'static-1',
      protocolType,
      protocolName: 'range',
      assignments: [{ memberId: join.memberId, assignment: Buffer.alloc(0) }],
    });
    assert.equal(sync.errorCode, 0);
  }
  const commit = await c.request(8, OffsetCommitRequestCodec, OffsetCommitResponseCodec, 7, {
    groupId: SIMPLE,
    generationIdOrMemberEpoch: -1,
    memberId: '',
    groupInstanceId: null,
    retentionTimeMs: -1n,
    topics: [
      { name: 'orders', partitions: [{ partitionIndex: 0, committedOffset: 1n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: '' }] },
    ],
  });
  assert.equal(commit.topics[0]!.partitions[0]!.errorCode, 0);
});
after(async () => {
  c.close();
  await b.stop();
});

async function listed(version: number, statesFilter: string[] = [], typesFilter: string[] = []) {
  const res = await c.request(16, ListGroupsRequestCodec, ListGroupsResponseCodec, version, { statesFilter, typesFilter });
  assert.equal(res.errorCode, 0);
  return res.groups.map((g) => ({ ...g })).sort((x, y) => (x.groupId < y.groupId ? -1 : 1));
}

test('ListGroups v0-v5: every group; v4 filters by state, v5 by type (case-insensitive) and says the type', async () => {
  for (let v = 0; v <= 3; v++)
    assert.deepEqual(
      (await listed(v, ['Stable'], ['share'])).map((g) => g.groupId),
      [CONNECT, CONSUMERS, SIMPLE],
      `v${v} ignores filters it cannot carry`,
    );
  assert.deepEqual(await listed(4), [
    { groupId: CONNECT, protocolType: 'connect', groupState: 'Stable', groupType: '' },
    { groupId: CONSUMERS, protocolType: 'consumer', groupState: 'Stable', groupType: '' },
    { groupId: SIMPLE, protocolType: '', groupState: 'Empty', groupType: '' },
  ]);
  assert.deepEqual(
    (await listed(4, ['empty'])).map((g) => g.groupId),
    [SIMPLE],
  );
  assert.deepEqual(
    (await listed(5)).map((g) => [g.groupId, g.groupType]),
    [
      [CONNECT, 'Classic'],
      [CONSUMERS, 'Classic'],
      [SIMPLE, 'Classic'],
    ],
  );
  assert.deepEqual((await listed(5, [], ['CLASSIC'])).length, 3);
  assert.deepEqual(await listed(5, [], ['consumer']), []);
  assert.deepEqual(await listed(5, [], ['share', 'Consumer']), []);
  assert.deepEqual(
    (await listed(5, ['STABLE'], ['classic', 'share'])).map((g) => g.groupId),
    [CONNECT, CONSUMERS],
  );
});

test('the admin client lists with the filters and carries the type', async () => {
  const admin = new Admin({ bootstrapServers: [b.bootstrap] });
  try {
    assert.deepEqual(
      (await admin.listGroups()).map((g) => [g.groupId, g.protocolType, g.state, g.type]),
      [
        [CONNECT, 'connect', 'Stable', 'Classic'],
        [CONSUMERS, 'consumer', 'Stable', 'Classic'],
        [SIMPLE, '', 'Empty', 'Classic'],
      ],
    );
    assert.deepEqual(
      (await admin.listGroups({ states: ['Empty'] })).map((g) => g.groupId),
      [SIMPLE],
    );
    assert.deepEqual(await admin.listGroups({ types: ['Consumer'] }), []);
    assert.deepEqual(
      (await admin.listGroups({ types: ['Classic'], states: ['Stable'] })).map((g) => g.groupId),
      [CONNECT, CONSUMERS],
    );
  } finally {
    await admin.close();
  }
});

/** Kafka's layout: every column `%-Ns`, N = max(20, the longest value); rows end with the separator. */
function table(rows: [string, string, string][]): string {
  const w = Math.max(20, ...rows.flat().map((s) => s.length));
  return [`${'GROUP'.padEnd(w)} ${'TYPE'.padEnd(w)} ${'PROTOCOL'.padEnd(w)}`, ...rows.map((r) => r.map((s) => `${s.padEnd(w)} `).join(''))].join('\n') + '\n';
}

test('kafka-groups.sh --list and its filters print Kafka 4 GroupsCommand table', async () => {
  const cases: [string[], [string, string, string][]][] = [
    [
      [],
      [
        [CONNECT, 'Classic', 'connect'],
        [CONSUMERS, 'Classic', 'consumer'],
        [SIMPLE, 'Classic', ''],
      ],
    ],
    [
      ['--consumer'],
      [
        [CONSUMERS, 'Classic', 'consumer'],
        [SIMPLE, 'Classic', ''],
      ],
    ],
    [['--protocol', 'connect'], [[CONNECT, 'Classic', 'connect']]],
    [['--group-type', 'CLASSIC', '--protocol', 'consumer'], [[CONSUMERS, 'Classic', 'consumer']]],
    [['--group-type', 'consumer'], []],
    [['--share'], []],
  ];
  for (const [filters, rows] of cases) {
    const r = await groupsTool('--bootstrap-server', b.bootstrap, '--list', ...filters);
    assert.equal(r.stderr, '', filters.join(' '));
    assert.equal(r.code, 0, filters.join(' '));
    assert.equal(r.stdout, table(rows), filters.join(' '));
  }
  // The header alone is 20 wide per column.
  assert.equal(table([]), 'GROUP                TYPE                 PROTOCOL            \n');
  const viaRunClass = await run(RUN_CLASS, ['org.apache.kafka.tools.GroupsCommand', '--bootstrap-server', b.bootstrap, '--list', '--protocol', 'connect'], {
    timeoutMs: 30_000,
  });
  assert.equal(viaRunClass.stdout, table([[CONNECT, 'Classic', 'connect']]));
});

test('kafka-groups.sh: --help exits 0; a wrong command line is one line on stderr and exit 1', async () => {
  const help = await groupsTool('--help');
  assert.equal(help.code, 0);
  assert.match(help.stdout, /--bootstrap-server <server to connect to>\s+REQUIRED: The Kafka server to connect to\./);
  assert.match(help.stdout, /--group-type <type>\s+Filter the groups based on group type\./);
  const cases: [string[], string][] = [
    [[], 'This tool helps to list groups of all types. (see --help)'],
    [['--list'], 'missing required argument --bootstrap-server (see --help)'],
    [['--bootstrap-server', b.bootstrap], 'Command must include exactly one action: --list.'],
    [['--bootstrap-server', b.bootstrap, '--list', '--group-type', 'unknown'], '--group-type must be a valid group type.'],
    [['--bootstrap-server', b.bootstrap, '--list', '--consumer', '--share'], `Option "[consumer]" can't be used with option "[share]"`],
    [['--bootstrap-server', b.bootstrap, '--list', '--share', '--protocol', 'x'], `Option "[share]" can't be used with option "[protocol]"`],
  ];
  for (const [args, line] of cases) {
    const r = await groupsTool(...args);
    assert.equal(r.code, 1, args.join(' '));
    assert.equal(r.stdout, '', args.join(' '));
    assert.equal(r.stderr, `kafka-groups.sh: ${line}\n`, args.join(' '));
  }
});
