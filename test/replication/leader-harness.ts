/**
 * The leader side of replication without a real follower: a cluster-mode broker's replica
 * manager over real logs, made leader of `rep-0` (replicas [1, 2, 3]) by LeaderAndIsr, with
 * followers played by replica fetches through the Fetch handler and ISR changes going to a fake
 * writer. Shared by leader-replication.test.ts and leader-replica-fetch.test.ts.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Reader, Writer, type Input } from '../../src/protocol/primitives/index.js';
import { FetchRequestCodec, FetchResponseCodec, type FetchRequest, type FetchResponse } from '../../src/protocol/messages/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { encodeBatch } from '../../src/protocol/records/index.js';
import { ZkBrokerMetadata } from '../../src/metadata/zk/zk-broker-metadata.js';
import { LogManager } from '../../src/storage/manager/log-manager.js';
import { ReplicaManager } from '../../src/replication/replica-manager.js';
import type { IsrChange, IsrWriter, Partition } from '../../src/replication/partition/partition.js';
import { brokerLogDefaults } from '../../src/replication/log-config.js';
import { buildBrokerConfig } from '../../src/server/config/index.js';
import { silentLogger } from '../../src/server/logger.js';
import { ControlRequests } from '../../src/server/cluster/control-requests.js';
import { fetchHandler } from '../../src/server/handlers/01-fetch.js';
import type { RequestContext } from '../../src/server/handlers/types.js';
import { serveRequest } from '../../src/server/request-router.js';
import type { BrokerServices } from '../../src/server/broker-services.js';
import { broker, fakeZk, header, pstate, simpleAssigner } from '../metadata/zk/zk-broker-helpers.js';
import { testConnection } from '../helpers/connection-context.js';

export const TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAw';
export const T = 'rep';

/** An ISR writer that records each change and answers as told (default: accepted, epoch + 1). */
export class FakeIsrWriter implements IsrWriter {
  readonly changes: IsrChange[] = [];
  answer: (c: IsrChange) => number | 'BAD_VERSION' = (c) => c.partitionEpoch + 1;
  writeIsr(change: IsrChange): Promise<number | 'BAD_VERSION'> {
    this.changes.push(change);
    return Promise.resolve(this.answer(change));
  }
}

export interface Leader {
  rm: ReplicaManager;
  control: ControlRequests;
  image: ZkBrokerMetadata;
  writer: FakeIsrWriter;
  services: Partial<BrokerServices>;
  partition(): Partition;
  close(): Promise<void>;
}

/** Broker 1, leader of `rep-0` (replicas [1, 2, 3], ISR `isr`) at leader epoch `epoch`. */
export async function startLeader(
  opts: { isr?: number[]; epoch?: number; configs?: Record<string, string>; withoutUpdateMetadata?: boolean } = {},
): Promise<Leader> {
  const dir = await mkdtemp(join(tmpdir(), 'fjord-leader-'));
  const entries: [string, string][] = [['broker.id', '1'], ['log.dirs', dir], ['zookeeper.connect', '127.0.0.1:1'], ...Object.entries(opts.configs ?? {})];
  const config = buildBrokerConfig(new Map(entries));
  const logger = silentLogger();
  const zk = fakeZk();
  const image = new ZkBrokerMetadata({ brokerId: 1, clusterId: 'c', zk: zk.api, assigner: simpleAssigner, logger, writeTimeoutMs: 2000 });
  const logManager = await LogManager.open({ logDirs: [dir], defaults: brokerLogDefaults(config), cleanerEnabled: false });
  const writer = new FakeIsrWriter();
  const rm = await ReplicaManager.start({ config, metadata: image, logManager, logger, controllerManaged: true, isrWriter: writer });
  const control = new ControlRequests({ brokerId: 1, image, roles: rm, brokerEpoch: () => -1n, logger });
  const state = pstate(T, 0, 1, opts.epoch ?? 1, [1, 2, 3], opts.isr ?? [1, 2, 3]);
  // withoutUpdateMetadata: the controller's UpdateMetadata (sent after LeaderAndIsr) has not arrived yet.
  if (!opts.withoutUpdateMetadata) await control.updateMetadata(header(1), [broker(1), broker(2), broker(3)], [state], new Map([[T, TOPIC_ID]]));
  const res = await control.leaderAndIsr(header(1), [{ ...state, topicId: TOPIC_ID }]);
  assert.equal(res.partitions[0]!.errorCode, ErrorCode.NONE);
  return {
    rm,
    control,
    image,
    writer,
    services: { replicaManager: rm, metadata: image, config },
    partition: () => rm.getPartition(T, 0)!,
    async close() {
      await image.close();
      await rm.shutdown();
      await logManager.shutdown();
      await rm_(dir);
    },
  };
}
const rm_ = (dir: string) => rm(dir, { recursive: true, force: true });

export function batch(n: number, tag = 'v'): Buffer {
  return encodeBatch({
    records: Array.from({ length: n }, (_, i) => ({
      attributes: 0,
      timestampDelta: 0,
      offsetDelta: i,
      key: null,
      value: Buffer.from(`${tag}${i}`),
      headers: [],
    })),
    baseTimestamp: BigInt(Date.now()),
  });
}

/** One Fetch through the real handler, in `version`'s layout both ways. */
export async function fetchVia(l: Leader, version: number, body: Input<FetchRequest>): Promise<FetchResponse> {
  const w = new Writer(256);
  FetchRequestCodec.write(w, { maxBytes: 1 << 20, maxWaitMs: 0, minBytes: 1, sessionEpoch: -1, ...body }, version);
  const ctx: RequestContext = {
    header: { apiKey: 1, apiVersion: version, correlationId: 1, clientId: 'replica' },
    connection: testConnection(),
    services: l.services as BrokerServices,
  };
  const writeBody = await serveRequest(fetchHandler, new Reader(w.result()), ctx);
  const out = new Writer(256);
  writeBody!(out);
  return FetchResponseCodec.read(new Reader(out.result()), version);
}

/** A replica fetch of rep-0 by `replicaId` (v12 unless told), replica id in the v15+ place when asked. */
export function replicaFetch(
  l: Leader,
  replicaId: number,
  fetchOffset: number,
  extra: { version?: number; currentLeaderEpoch?: number; lastFetchedEpoch?: number; maxWaitMs?: number } = {},
): Promise<FetchResponse> {
  const version = extra.version ?? 12;
  const ids = version >= 15 ? { replicaId: -1, replicaState: { replicaId, replicaEpoch: -1n } } : { replicaId };
  return fetchVia(l, version, {
    ...ids,
    maxWaitMs: extra.maxWaitMs ?? 0,
    topics: [
      {
        topic: T,
        topicId: TOPIC_ID,
        partitions: [
          {
            partition: 0,
            fetchOffset: BigInt(fetchOffset),
            partitionMaxBytes: 1 << 20,
            currentLeaderEpoch: extra.currentLeaderEpoch ?? -1,
            lastFetchedEpoch: extra.lastFetchedEpoch ?? -1,
            logStartOffset: -1n,
          },
        ],
      },
    ],
  });
}

export function consumerFetch(l: Leader, fetchOffset: number, maxWaitMs = 0): Promise<FetchResponse> {
  return fetchVia(l, 12, {
    replicaId: -1,
    maxWaitMs,
    topics: [
      {
        topic: T,
        partitions: [
          { partition: 0, fetchOffset: BigInt(fetchOffset), partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1, lastFetchedEpoch: -1, logStartOffset: -1n },
        ],
      },
    ],
  });
}

export const part = (r: FetchResponse) => r.responses[0]!.partitions[0]!;

export function produce(l: Leader, n: number, acks: number, timeoutMs = 10_000) {
  return l.rm.appendRecords(T, 0, batch(n), { requiredAcks: acks, origin: 'client', produceVersion: 9, timeoutMs });
}
