/**
 * A coordinator's records in a partition of an internal topic, through the data plane: appends
 * go through ReplicaManager.appendRecords (origin 'coordinator', acks=all) and loading reads the
 * partition's log from its start to its end.
 */
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import {
  BASE_OFFSET,
  LAST_OFFSET_DELTA,
  RecordsError,
  checkBatchRecordsAsync,
  encodeBatch,
  forEachRecordAsync,
  openBatchAsync,
  iterateBatches,
  readDecompressionCap,
  type KafkaRecord,
  type OpenedBatch,
} from '../../protocol/records/index.js';
import type { BatchContext, CoordinatorLog, EncodedRecord, TransactionalProducer } from './types.js';

/** A led partition of an internal topic, as a coordinator reads it (the broker's Partition fits). */
export interface CoordinatorPartition extends ReadableLog {
  readonly leaderEpoch: number;
  readonly log: { readonly config: { readonly maxMessageBytes: number } };
}

/**
 * What a coordinator needs of the broker's replica manager: appends through the data plane and
 * the partitions led here. Declared here (the replica manager fits it as it is) so that the
 * coordinators do not depend on replication/, their peer.
 */
export interface CoordinatorReplicaAccess {
  appendRecords(
    topic: string,
    partition: number,
    records: Buffer,
    req: { requiredAcks: number; origin: 'coordinator' },
  ): Promise<{ errorCode: number; errorMessage: string | null }>;
  getPartition(topic: string, partition: number): CoordinatorPartition | undefined;
}

/** How Kafka's coordinators translate a failed append into what the client should do. */
export function coordinatorAppendError(code: number): number {
  switch (code) {
    case ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
    case ErrorCode.NOT_ENOUGH_REPLICAS:
    case ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case ErrorCode.REQUEST_TIMED_OUT:
      return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    case ErrorCode.NOT_LEADER_OR_FOLLOWER:
    case ErrorCode.KAFKA_STORAGE_ERROR:
      return ErrorCode.NOT_COORDINATOR;
    case ErrorCode.MESSAGE_TOO_LARGE:
    case ErrorCode.RECORD_LIST_TOO_LARGE:
      return ErrorCode.INVALID_COMMIT_OFFSET_SIZE;
    default:
      return code;
  }
}

const LOAD_READ_BYTES = 5 * 1024 * 1024; // offsets.load.buffer.size's default

export class ReplicaManagerCoordinatorLog implements CoordinatorLog {
  constructor(
    private readonly replicaManager: CoordinatorReplicaAccess,
    private readonly topic: string,
    /** Told of each batch skipped while loading because it cannot be decoded. */
    private readonly onBadBatch?: (message: string) => void,
  ) {}

  async append(partition: number, records: EncodedRecord[], now: number, producer?: TransactionalProducer): Promise<void> {
    const batch = encodeBatch({
      records: records.map((r, i): KafkaRecord => ({ attributes: 0, timestampDelta: 0, offsetDelta: i, key: r.key, value: r.value, headers: [] })),
      baseTimestamp: BigInt(now),
      ...(producer ? { producerId: producer.producerId, producerEpoch: producer.producerEpoch, isTransactional: true } : {}),
    });
    const res = await this.replicaManager.appendRecords(this.topic, partition, batch, { requiredAcks: -1, origin: 'coordinator' });
    if (res.errorCode !== ErrorCode.NONE) throw new KafkaError(coordinatorAppendError(res.errorCode), res.errorMessage ?? undefined);
  }

  async replay(
    partition: number,
    onRecord: (key: Buffer, value: Buffer | null, batch: BatchContext) => void,
    onMarker?: (producerId: bigint, commit: boolean) => void,
  ): Promise<void> {
    const p = this.replicaManager.getPartition(this.topic, partition);
    if (!p) throw new KafkaError(ErrorCode.NOT_COORDINATOR, `${this.topic}-${partition} is not led here`);
    await replayLog(p, onRecord, {
      ...(onMarker ? { onMarker } : {}),
      maxDecompressedBytes: readDecompressionCap(p.log.config.maxMessageBytes),
      onBadBatch: (baseOffset, err) =>
        this.onBadBatch?.(`loading ${this.topic}-${partition}: skipped the batch at offset ${baseOffset}, which cannot be decoded (${err.message})`),
    });
  }
}

/** What loading needs of a partition: its offsets range and reads (a Partition, or a bare Log in benches). */
export interface ReadableLog {
  readonly logStartOffset: number;
  readonly logEndOffset: number;
  read(fetchOffset: number, maxBytes: number, minOneBatch: boolean, upTo: number): Promise<{ records: Buffer }>;
}

export interface ReplayOptions {
  /** Cap on one batch's inflated records; default readDecompressionCap() (32 MiB). */
  maxDecompressedBytes?: number;
  /** A batch that cannot be decoded within the cap (or at all): it is skipped and the load goes on. */
  onBadBatch?: (baseOffset: bigint, err: RecordsError) => void;
  /** Transaction markers (control batches: COMMIT = type 1, ABORT = type 0) of a producer. */
  onMarker?: (producerId: bigint, commit: boolean) => void;
}

/**
 * Calls `onRecord` for every keyed record of the log, start to end (control batches skipped).
 * Each batch inflates within the cap, off the event loop; a batch that cannot be decoded is
 * reported and skipped whole (none of its records replayed), so one bad batch cannot stop a
 * coordinator from loading the rest of its partition.
 */
export async function replayLog(
  p: ReadableLog,
  onRecord: (key: Buffer, value: Buffer | null, batch: BatchContext) => void,
  opts: ReplayOptions = {},
): Promise<void> {
  const maxBytes = opts.maxDecompressedBytes ?? readDecompressionCap();
  const end = p.logEndOffset;
  let offset = p.logStartOffset;
  while (offset < end) {
    const { records } = await p.read(offset, LOAD_READ_BYTES, true, end);
    let next = offset;
    for (const entry of iterateBatches(records)) {
      if (entry.magic !== 2) continue;
      const baseOffset = entry.buf.readBigInt64BE(entry.start + BASE_OFFSET);
      next = Number(baseOffset) + entry.buf.readInt32BE(entry.start + LAST_OFFSET_DELTA) + 1;
      let batch: OpenedBatch;
      try {
        batch = await openBatchAsync(entry.buf, entry.start, { verifyCrc: false, maxBytes });
        const bad = await checkBatchRecordsAsync(batch);
        if (bad) throw bad;
      } catch (err) {
        if (!(err instanceof RecordsError)) throw err;
        opts.onBadBatch?.(baseOffset, err);
        continue;
      }
      if (batch.isControl) {
        const onMarker = opts.onMarker;
        if (onMarker) {
          await forEachRecordAsync(batch, (r) => {
            // Control record key: int16 version, int16 type (0 ABORT, 1 COMMIT).
            if (r.key !== null && r.key.length >= 4) {
              const type = r.key.readInt16BE(2);
              if (type === 0 || type === 1) onMarker(batch.producerId, type === 1);
            }
          });
        }
        continue;
      }
      const ctx: BatchContext = { producerId: batch.producerId, isTransactional: batch.isTransactional };
      await forEachRecordAsync(batch, (r) => {
        if (r.key !== null) onRecord(r.key, r.value, ctx);
      });
    }
    if (next <= offset) break; // nothing readable (should not happen below the end)
    offset = next;
  }
}
