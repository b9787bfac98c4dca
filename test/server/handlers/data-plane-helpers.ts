/** Shared helpers for the data-plane handler tests: a topic, batches, produce and fetch calls. */
import type { TestBroker } from '../../helpers/broker.js';
import type { RawClient } from '../../helpers/raw-client.js';
import { FetchRequestCodec, FetchResponseCodec, ProduceRequestCodec, ProduceResponseCodec } from '../../../src/protocol/messages/index.js';
import type { FetchRequest, FetchResponse, ProduceResponse } from '../../../src/protocol/messages/index.js';
import { CompressionType, decodeBatch, encodeBatch, iterateBatches } from '../../../src/protocol/records/index.js';
import type { Input } from '../../../src/protocol/primitives/index.js';

export async function createTopic(b: TestBroker, name: string, partitions = 1, configs: Record<string, string> = {}): Promise<void> {
  await b.broker.services.metadata.createTopic({ name, numPartitions: partitions, replicationFactor: 1, configs });
  await b.broker.services.replicaManager.syncTopic(name);
}

export function batchOf(
  values: string[],
  opts: { producerId?: bigint; epoch?: number; seq?: number; compression?: CompressionType; ts?: bigint } = {},
): Buffer {
  return encodeBatch({
    records: values.map((v, i) => ({ attributes: 0, timestampDelta: i, offsetDelta: i, key: Buffer.from(`k${i}`), value: Buffer.from(v), headers: [] })),
    baseTimestamp: opts.ts ?? 1_700_000_000_000n,
    compression: opts.compression ?? CompressionType.None,
    producerId: opts.producerId ?? -1n,
    producerEpoch: opts.epoch ?? -1,
    baseSequence: opts.seq ?? -1,
  });
}

export function produce(c: RawClient, version: number, topic: string, partition: number, records: Buffer | null, acks = -1): Promise<ProduceResponse> {
  return c.request(0, ProduceRequestCodec, ProduceResponseCodec, version, {
    transactionalId: null,
    acks,
    timeoutMs: 5000,
    topicData: [{ name: topic, partitionData: [{ index: partition, records }] }],
  });
}

export function fetch(c: RawClient, version: number, body: Input<FetchRequest>): Promise<FetchResponse> {
  return c.request(1, FetchRequestCodec, FetchResponseCodec, version, { replicaId: -1, maxBytes: 1 << 20, ...body });
}

export function fetchOne(
  c: RawClient,
  version: number,
  topic: string,
  partition: number,
  offset: number,
  extra: Input<FetchRequest> = {},
  topicId?: string,
): Promise<FetchResponse> {
  return fetch(c, version, {
    maxWaitMs: 0,
    minBytes: 0,
    topics: [{ topic, topicId, partitions: [{ partition, fetchOffset: BigInt(offset), partitionMaxBytes: 1 << 20 }] }],
    ...extra,
  });
}

/** Values of every record in a fetched v2 records section. */
export function valuesOf(records: Buffer | null): string[] {
  const out: string[] = [];
  if (!records) return out;
  for (const e of iterateBatches(records)) {
    const batch = decodeBatch(records, e.start, { maxBytes: 1 << 30 });
    for (const r of batch.records) out.push(r.value?.toString() ?? '');
  }
  return out;
}
