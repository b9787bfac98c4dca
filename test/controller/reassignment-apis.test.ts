/**
 * AlterPartitionReassignments (45) and ListPartitionReassignments (46) handlers over the real
 * controller (fake ZooKeeper): wire answers as Kafka's, NOT_CONTROLLER off the controller, and
 * advertised only in cluster mode.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as m from '../../src/protocol/messages/index.js';
import { Reader, Writer } from '../../src/protocol/primitives/index.js';
import { alterPartitionReassignmentsHandler } from '../../src/server/handlers/45-alter-partition-reassignments.js';
import { listPartitionReassignmentsHandler } from '../../src/server/handlers/46-list-partition-reassignments.js';
import { ALL_HANDLERS, ZK_BROKER_HANDLERS, handlerTable } from '../../src/server/handlers/index.js';
import type { ApiHandler, RequestContext } from '../../src/server/handlers/types.js';
import { serveRequest } from '../../src/server/request-router.js';
import type { KafkaController } from '../../src/controller/index.js';
import { startController } from './fakes.js';

function ctxWith(controller: KafkaController | undefined): RequestContext {
  return {
    header: { apiKey: 45, apiVersion: 0, correlationId: 1, clientId: 'x' },
    connection: {},
    services: { config: { zookeeperConnect: '127.0.0.1:1', brokerId: 1 }, controller },
  } as unknown as RequestContext;
}

async function call<Req, Res>(
  h: ApiHandler,
  reqCodec: { write(w: Writer, v: Req, version: number): void },
  resCodec: { read(r: Reader, v: number): Res },
  req: Req,
  ctx: RequestContext,
): Promise<Res> {
  const w = new Writer(64);
  reqCodec.write(w, req, 0);
  const write = await serveRequest(h, new Reader(w.result()), ctx);
  const out = new Writer(64);
  write!(out);
  return resCodec.read(new Reader(out.result()), 0);
}

const alter = (req: m.AlterPartitionReassignmentsRequest, ctx: RequestContext) =>
  call(alterPartitionReassignmentsHandler, m.AlterPartitionReassignmentsRequestCodec, m.AlterPartitionReassignmentsResponseCodec, req, ctx);
const list = (req: m.ListPartitionReassignmentsRequest, ctx: RequestContext) =>
  call(listPartitionReassignmentsHandler, m.ListPartitionReassignmentsRequestCodec, m.ListPartitionReassignmentsResponseCodec, req, ctx);

test('reassignment APIs: per-partition answers from the controller, listing with adding/removing, cancel', async () => {
  const h = await startController([1, 2, 3]);
  await h.zk.createTopic(
    't-x',
    'AAAAAAAAAAAAAAAAAAAAAQ',
    new Map([
      [0, [1, 2]],
      [1, [2, 1]],
    ]),
  );
  await h.controller.idle();
  const ctx = ctxWith(h.controller);
  const r = await alter(
    {
      timeoutMs: 1000,
      topics: [
        {
          name: 't-x',
          partitions: [
            { partitionIndex: 0, replicas: [2, 3] },
            { partitionIndex: 1, replicas: [3, 3] },
            { partitionIndex: 7, replicas: [1] },
          ],
        },
        {
          name: 'nope',
          partitions: [
            { partitionIndex: 0, replicas: null },
            { partitionIndex: 1, replicas: [1] },
          ],
        },
      ],
    },
    ctx,
  );
  assert.equal(r.errorCode, 0);
  assert.equal(r.errorMessage, null);
  const flat = r.responses.flatMap((t) => t.partitions.map((p) => `${t.name}/${p.partitionIndex}:${p.errorCode}:${p.errorMessage}`));
  assert.deepEqual(flat, [
    't-x/0:0:null',
    't-x/1:39:Duplicate replica ids in partition reassignment replica list: List(3, 3)',
    't-x/7:3:The partition does not exist.',
    'nope/0:85:No partition reassignment is in progress.',
    'nope/1:3:The partition does not exist.',
  ]);
  const all = await list({ timeoutMs: 1000, topics: null }, ctx);
  assert.equal(all.errorCode, 0);
  assert.deepEqual(all.topics, [{ name: 't-x', partitions: [{ partitionIndex: 0, replicas: [2, 3, 1], addingReplicas: [3], removingReplicas: [1] }] }]);
  const some = await list(
    {
      timeoutMs: 1000,
      topics: [
        { name: 't-x', partitionIndexes: [1] },
        { name: 'nope', partitionIndexes: [0] },
      ],
    },
    ctx,
  );
  assert.deepEqual(some.topics, [], 'partitions not being reassigned are left out');
  const cancel = await alter({ timeoutMs: 1000, topics: [{ name: 't-x', partitions: [{ partitionIndex: 0, replicas: null }] }] }, ctx);
  assert.equal(cancel.responses[0]!.partitions[0]!.errorCode, 0);
  assert.deepEqual((await list({ timeoutMs: 1000, topics: null }, ctx)).topics, []);
  // ORS in the order RS holds it (Kafka's ReplicaAssignment.originReplicas): [2, 3, 1] minus 3.
  assert.deepEqual(h.zk.topics.get('t-x')!.partitions.get(0), [2, 1]);
  await h.controller.stop();
});

test('reassignment APIs answer NOT_CONTROLLER off the controller, and are advertised only in cluster mode', async () => {
  const a = await alter({ timeoutMs: 1000, topics: [{ name: 't', partitions: [{ partitionIndex: 0, replicas: [1] }] }] }, ctxWith(undefined));
  assert.deepEqual({ e: a.errorCode, m: a.errorMessage, r: a.responses }, { e: 41, m: 'This is not the correct controller for this cluster.', r: [] });
  const inactive = { isActive: false } as unknown as KafkaController;
  assert.equal((await list({ timeoutMs: 1000, topics: null }, ctxWith(inactive))).errorCode, 41);
  assert.equal(handlerTable(ALL_HANDLERS).has(45), false);
  assert.equal(handlerTable(ALL_HANDLERS).has(46), false);
  const cluster = handlerTable([...ALL_HANDLERS, ...ZK_BROKER_HANDLERS]);
  assert.deepEqual([cluster.get(45)?.maxVersion, cluster.get(46)?.maxVersion], [0, 0]);
});
