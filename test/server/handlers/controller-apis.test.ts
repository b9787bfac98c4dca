/**
 * ControlledShutdown (7) and ElectLeaders (43): in embedded mode answered for the one-broker
 * cluster (advertised, sensible answers); in cluster mode NOT_CONTROLLER unless this broker's
 * controller is active, otherwise the controller's answer.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker } from '../../helpers/broker.js';
import { Connection } from '../../../src/client/connection.js';
import type { ApiDef } from '../../../src/client/apis.js';
import { Admin } from '../../../src/client/index.js';
import * as m from '../../../src/protocol/messages/index.js';
import { Reader, Writer } from '../../../src/protocol/primitives/index.js';
import { controlledShutdownHandler } from '../../../src/server/handlers/07-controlled-shutdown.js';
import { electLeadersHandler } from '../../../src/server/handlers/43-elect-leaders.js';
import type { RequestContext } from '../../../src/server/handlers/types.js';
import { serveRequest } from '../../../src/server/request-router.js';
import type { KafkaController } from '../../../src/controller/index.js';

const CONTROLLED_SHUTDOWN: ApiDef<m.ControlledShutdownRequest, m.ControlledShutdownResponse> = {
  apiKey: 7,
  name: 'ControlledShutdown',
  request: m.ControlledShutdownRequestCodec,
  response: m.ControlledShutdownResponseCodec,
  clientMax: 3,
};
const ELECT_LEADERS: ApiDef<m.ElectLeadersRequest, m.ElectLeadersResponse> = {
  apiKey: 43,
  name: 'ElectLeaders',
  request: m.ElectLeadersRequestCodec,
  response: m.ElectLeadersResponseCodec,
  clientMax: 2,
};

test('embedded mode: ControlledShutdown has nothing to move, ElectLeaders is never needed', async () => {
  const b = await startTestBroker();
  try {
    const admin = new Admin({ bootstrapServers: b.bootstrap });
    const created = await admin.createTopics([{ name: 't', numPartitions: 2, replicationFactor: 1 }]);
    assert.equal(created.get('t'), null);
    const c = await Connection.connect('127.0.0.1', b.port, { clientId: 't', connectTimeoutMs: 5000, requestTimeoutMs: 5000 });
    try {
      assert.equal(c.versionFor(CONTROLLED_SHUTDOWN as ApiDef<unknown, unknown>), 3);
      const cs = await c.send(CONTROLLED_SHUTDOWN, { brokerId: b.broker.config.brokerId, brokerEpoch: -1n });
      assert.deepEqual({ e: cs.errorCode, r: cs.remainingPartitions }, { e: 0, r: [] });
      const other = await c.send(CONTROLLED_SHUTDOWN, { brokerId: 77, brokerEpoch: -1n });
      assert.equal(other.errorCode, 8);
      const el = await c.send(ELECT_LEADERS, {
        electionType: 0,
        topicPartitions: [
          { topic: 't', partitions: [0, 5] },
          { topic: 'nope', partitions: [0] },
        ],
        timeoutMs: 1000,
      });
      const flat = el.replicaElectionResults.flatMap((r) => r.partitionResult.map((p) => `${r.topic}-${p.partitionId}:${p.errorCode}`)).sort();
      assert.deepEqual(flat, ['nope-0:3', 't-0:84', 't-5:3']);
    } finally {
      c.close();
      await admin.close();
    }
  } finally {
    await b.stop();
  }
});

function encode<T>(codec: { write(w: Writer, v: T, version: number): void }, value: T, version: number): Reader {
  const w = new Writer(64);
  codec.write(w, value, version);
  return new Reader(w.result());
}

function clusterCtx(controller: Partial<KafkaController> | undefined, version: number): RequestContext {
  return {
    header: { apiKey: 0, apiVersion: version, correlationId: 1, clientId: 'x' },
    connection: {},
    services: { config: { zookeeperConnect: '127.0.0.1:1', brokerId: 1 }, controller },
  } as unknown as RequestContext;
}

async function run<T>(h: typeof controlledShutdownHandler, body: Reader, ctx: RequestContext, codec: { read(r: Reader, v: number): T }, v: number): Promise<T> {
  const write = await serveRequest(h, body, ctx);
  const w = new Writer(64);
  write!(w);
  return codec.read(new Reader(w.result()), v);
}

test('cluster mode: NOT_CONTROLLER without an active controller; the controller answers otherwise', async () => {
  const csReq = (): Reader => encode(m.ControlledShutdownRequestCodec, { brokerId: 2, brokerEpoch: 10n }, 3);
  const r1 = await run(controlledShutdownHandler, csReq(), clusterCtx(undefined, 3), m.ControlledShutdownResponseCodec, 3);
  assert.equal(r1.errorCode, 41);
  const r2 = await run(controlledShutdownHandler, csReq(), clusterCtx({ isActive: false }, 3), m.ControlledShutdownResponseCodec, 3);
  assert.equal(r2.errorCode, 41);
  let asked: unknown[] = [];
  const active = {
    isActive: true,
    controlledShutdown: async (id: number, epoch: bigint) => {
      asked = [id, epoch];
      return [{ topic: 't', partition: 1 }];
    },
    electLeaders: async () =>
      new Map([
        ['t-0', 0],
        ['a-b-3', 80],
      ]),
  } as unknown as KafkaController;
  const r3 = await run(controlledShutdownHandler, csReq(), clusterCtx(active, 3), m.ControlledShutdownResponseCodec, 3);
  assert.deepEqual(asked, [2, 10n]);
  assert.deepEqual(r3.remainingPartitions, [{ topicName: 't', partitionIndex: 1 }]);
  const elReq = encode(m.ElectLeadersRequestCodec, { electionType: 0, topicPartitions: null, timeoutMs: 100 }, 2);
  const r4 = await run(electLeadersHandler, elReq, clusterCtx(active, 2), m.ElectLeadersResponseCodec, 2);
  const flat = r4.replicaElectionResults.flatMap((r) => r.partitionResult.map((p) => `${r.topic}|${p.partitionId}:${p.errorCode}`)).sort();
  assert.deepEqual(flat, ['a-b|3:80', 't|0:0'], 'topic names with dashes survive');
  const r5 = await run(
    electLeadersHandler,
    encode(m.ElectLeadersRequestCodec, { electionType: 1, topicPartitions: [{ topic: 't', partitions: [0] }], timeoutMs: 100 }, 2),
    clusterCtx(undefined, 2),
    m.ElectLeadersResponseCodec,
    2,
  );
  assert.equal(r5.errorCode, 41);
  assert.equal(r5.replicaElectionResults[0]!.partitionResult[0]!.errorCode, 41);
});
