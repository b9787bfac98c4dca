/**
 * LeaderAndIsr (v0–v7), StopReplica (v0–v4) and UpdateMetadata (v0–v8) handlers: every version
 * the codecs have is read into the same state (checked through the image and the local
 * partitions) and answered in that version's layout; in embedded mode they are not advertised
 * and a stray request closes the connection without touching the embedded store.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Reader, Writer, type Input, type MessageCodec } from '../../src/protocol/primitives/index.js';
import {
  LeaderAndIsrRequestCodec,
  LeaderAndIsrResponseCodec,
  StopReplicaRequestCodec,
  StopReplicaResponseCodec,
  UpdateMetadataRequestCodec,
  UpdateMetadataResponseCodec,
} from '../../src/protocol/messages/index.js';
import type { ApiHandler, RequestContext } from '../../src/server/handlers/types.js';
import { serveRequest } from '../../src/server/request-router.js';
import type { BrokerServices } from '../../src/server/broker-services.js';
import { leaderAndIsrHandler } from '../../src/server/handlers/04-leader-and-isr.js';
import { stopReplicaHandler } from '../../src/server/handlers/05-stop-replica.js';
import { updateMetadataHandler } from '../../src/server/handlers/06-update-metadata.js';
import { CloseConnectionError } from '../../src/server/network/types.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { startNode, type Node } from '../metadata/zk/zk-broker-helpers.js';
import { startTestBroker } from '../helpers/broker.js';
import { Connection } from '../../src/client/connection.js';
import { testConnection } from '../helpers/connection-context.js';

const TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAg';

async function call<Req, Res>(
  h: ApiHandler,
  reqCodec: MessageCodec<Req>,
  resCodec: MessageCodec<Res>,
  req: Input<Req>,
  version: number,
  services: Partial<BrokerServices>,
): Promise<Res> {
  const w = new Writer(256);
  reqCodec.write(w, req, version);
  const ctx: RequestContext = {
    header: { apiKey: h.apiKey, apiVersion: version, correlationId: 1, clientId: 'controller' },
    connection: testConnection(),
    services: services as BrokerServices,
  };
  const writeBody = await serveRequest(h, new Reader(w.result()), ctx);
  const out = new Writer(256);
  writeBody!(out);
  return resCodec.read(new Reader(out.result()), version);
}

const services = (n: Node): Partial<BrokerServices> => ({ clusterControl: n.control });

test('UpdateMetadata v0–v8: brokers with endpoints per listener (by protocol before v3), racks, partitions, ids (v7+)', async () => {
  for (let v = UpdateMetadataRequestCodec.minVersion; v <= UpdateMetadataRequestCodec.maxVersion; v++) {
    const n = await startNode(1);
    try {
      const partition = {
        topicName: 'u',
        partitionIndex: 0,
        controllerEpoch: 2,
        leader: 2,
        leaderEpoch: 7,
        isr: [2, 1],
        zkVersion: 3,
        replicas: [2, 1],
        offlineReplicas: [],
      };
      const liveBrokers = [1, 2].map((id) => ({
        id,
        v0Host: `h${id}`,
        v0Port: 9000 + id,
        rack: `r${id}`,
        endpoints: [{ port: 9000 + id, host: `h${id}`, listener: 'EXTERNAL', securityProtocol: 0 }],
      }));
      const req =
        v <= 4
          ? { controllerId: 2, controllerEpoch: 2, brokerEpoch: -1n, ungroupedPartitionStates: [partition], liveBrokers }
          : {
              controllerId: 2,
              controllerEpoch: 2,
              brokerEpoch: -1n,
              topicStates: [{ topicName: 'u', topicId: TOPIC_ID, partitionStates: [partition] }],
              liveBrokers,
            };
      const res = await call(updateMetadataHandler, UpdateMetadataRequestCodec, UpdateMetadataResponseCodec, req, v, services(n));
      assert.equal(res.errorCode, ErrorCode.NONE, `v${v}`);
      const listener = v === 0 || v < 3 ? 'PLAINTEXT' : 'EXTERNAL';
      assert.deepEqual(n.image.endpoint(2, listener), { host: 'h2', port: 9002 }, `v${v} endpoint under ${listener}`);
      assert.equal(n.image.brokers().find((b) => b.id === 2)!.rack, v >= 2 ? 'r2' : null, `v${v} rack`);
      const p = n.image.topic('u')!.partitions[0]!;
      assert.deepEqual([p.leader, p.leaderEpoch, p.isr, p.replicas], [2, 7, [2, 1], [2, 1]], `v${v}`);
      if (v >= 7) assert.equal(n.image.topic('u')!.topicId, TOPIC_ID, `v${v} topic id`);
      assert.equal(n.image.controllerId(), 2);
      // A stale controller epoch in this version's layout.
      const stale = await call(updateMetadataHandler, UpdateMetadataRequestCodec, UpdateMetadataResponseCodec, { ...req, controllerEpoch: 1 }, v, services(n));
      assert.equal(stale.errorCode, ErrorCode.STALE_CONTROLLER_EPOCH, `v${v}`);
    } finally {
      await n.close();
    }
  }
});

test('LeaderAndIsr v0–v7: partitions opened as leader/follower, per-partition errors in v0–v4 layout, per topic id from v5', async () => {
  for (let v = LeaderAndIsrRequestCodec.minVersion; v <= LeaderAndIsrRequestCodec.maxVersion; v++) {
    const n = await startNode(1);
    try {
      const ps = (partitionIndex: number, leader: number, leaderEpoch: number, replicas: number[]) => ({
        topicName: 'l',
        partitionIndex,
        controllerEpoch: 1,
        leader,
        leaderEpoch,
        isr: replicas,
        partitionEpoch: 0,
        replicas,
      });
      const parts = [ps(0, 1, 2, [1, 2]), ps(1, 2, 2, [2, 1]), ps(2, 2, 2, [2, 3])];
      const base = { controllerId: 0, controllerEpoch: 1, brokerEpoch: -1n, liveLeaders: [] };
      const req =
        v <= 1 ? { ...base, ungroupedPartitionStates: parts } : { ...base, topicStates: [{ topicName: 'l', topicId: TOPIC_ID, partitionStates: parts }] };
      const res = await call(leaderAndIsrHandler, LeaderAndIsrRequestCodec, LeaderAndIsrResponseCodec, req, v, services(n));
      assert.equal(res.errorCode, ErrorCode.NONE, `v${v}`);
      const errors =
        v <= 4
          ? res.partitionErrors.map((e) => [e.topicName, e.partitionIndex, e.errorCode])
          : res.topics.flatMap((t) => t.partitionErrors.map((e) => [t.topicId, e.partitionIndex, e.errorCode]));
      const topicKey = v <= 4 ? 'l' : v >= 5 ? TOPIC_ID : 'l';
      assert.deepEqual(
        errors,
        [
          [topicKey, 0, 0],
          [topicKey, 1, 0],
          [topicKey, 2, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
        ],
        `v${v}`,
      );
      assert.equal(n.replicaManager.getPartition('l', 0)!.isLeader, true, `v${v}`);
      assert.equal(n.replicaManager.getPartition('l', 1)!.isLeader, false, `v${v}`);
      // Lower leader epoch for partition 0: fenced, in this version's layout.
      const lower =
        v <= 1
          ? { ...base, ungroupedPartitionStates: [ps(0, 2, 1, [1, 2])] }
          : { ...base, topicStates: [{ topicName: 'l', topicId: TOPIC_ID, partitionStates: [ps(0, 2, 1, [1, 2])] }] };
      const fenced = await call(leaderAndIsrHandler, LeaderAndIsrRequestCodec, LeaderAndIsrResponseCodec, lower, v, services(n));
      const code = v <= 4 ? fenced.partitionErrors[0]!.errorCode : fenced.topics[0]!.partitionErrors[0]!.errorCode;
      assert.equal(code, ErrorCode.FENCED_LEADER_EPOCH, `v${v}`);
      assert.equal(n.replicaManager.getPartition('l', 0)!.isLeader, true, `v${v}: nothing applied`);
    } finally {
      await n.close();
    }
  }
});

test('StopReplica v0–v4: one delete flag (v0–v2) or per partition with its epoch (v3+)', async () => {
  for (let v = StopReplicaRequestCodec.minVersion; v <= StopReplicaRequestCodec.maxVersion; v++) {
    const n = await startNode(1);
    try {
      await n.control.leaderAndIsr(
        { controllerId: 0, controllerEpoch: 1, brokerEpoch: -1n },
        [0, 1].map((p) => ({
          topic: 's',
          topicId: undefined,
          partition: p,
          controllerEpoch: 1,
          leader: 1,
          leaderEpoch: 3,
          isr: [1],
          replicas: [1],
          offlineReplicas: [],
          zkVersion: 0,
        })),
      );
      const base = { controllerId: 0, controllerEpoch: 1, brokerEpoch: -1n };
      const req =
        v === 0
          ? { ...base, deletePartitions: true, ungroupedPartitions: [{ topicName: 's', partitionIndex: 0 }] }
          : v <= 2
            ? { ...base, deletePartitions: true, topics: [{ name: 's', partitionIndexes: [0] }] }
            : {
                ...base,
                topicStates: [
                  {
                    topicName: 's',
                    partitionStates: [
                      { partitionIndex: 0, leaderEpoch: 3, deletePartition: true },
                      { partitionIndex: 1, leaderEpoch: 2, deletePartition: true },
                    ],
                  },
                ],
              };
      const res = await call(stopReplicaHandler, StopReplicaRequestCodec, StopReplicaResponseCodec, req, v, services(n));
      assert.equal(res.errorCode, ErrorCode.NONE, `v${v}`);
      assert.equal(n.replicaManager.getPartition('s', 0), undefined, `v${v}: partition 0 deleted`);
      if (v >= 3) {
        assert.deepEqual(
          res.partitionErrors.map((e) => [e.partitionIndex, e.errorCode]),
          [
            [0, 0],
            [1, ErrorCode.FENCED_LEADER_EPOCH],
          ],
        );
        assert.ok(n.replicaManager.getPartition('s', 1), 'fenced: kept');
      } else {
        assert.deepEqual(
          res.partitionErrors.map((e) => [e.topicName, e.partitionIndex, e.errorCode]),
          [['s', 0, 0]],
        );
      }
    } finally {
      await n.close();
    }
  }
});

test('embedded mode: the controller APIs are not advertised, a stray one closes the connection, topics are untouched', async () => {
  await assert.rejects(
    call(updateMetadataHandler, UpdateMetadataRequestCodec, UpdateMetadataResponseCodec, { controllerId: 0, controllerEpoch: 1, liveBrokers: [] }, 7, {}),
    (e: unknown) => e instanceof CloseConnectionError,
  );
  const b = await startTestBroker();
  try {
    await b.broker.services.metadata.createTopic({ name: 'kept', numPartitions: 1, replicationFactor: 1 });
    const conn = await Connection.connect('127.0.0.1', b.port, { clientId: 't', connectTimeoutMs: 5000, requestTimeoutMs: 5000 });
    try {
      for (const key of [4, 5, 6]) assert.equal(conn.brokerApiVersions.has(key), false, `API ${key} not advertised`);
      const stray = { apiKey: 6, name: 'UpdateMetadata', request: UpdateMetadataRequestCodec, response: UpdateMetadataResponseCodec, clientMax: 8 };
      await assert.rejects(conn.send(stray, { controllerId: 5, controllerEpoch: 99, liveBrokers: [] }, { version: 7 }));
    } finally {
      conn.close();
    }
    assert.ok(b.broker.services.metadata.topic('kept'));
    assert.deepEqual(
      b.broker.services.metadata.brokers().map((x) => x.id),
      [b.broker.config.brokerId],
    );
  } finally {
    await b.stop();
  }
});
