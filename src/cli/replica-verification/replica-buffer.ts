/**
 * The checking half of kafka-replica-verification.sh (Kafka's ReplicaVerificationTool
 * ReplicaBuffer): one round's fetched data of every replica of every partition is compared batch
 * by batch, up to each replica's high watermark. Where all replicas hold the next batch, its last
 * offset must be the same everywhere (else the tool stops: the replicas diverged) and its
 * checksum too (else a line says so); the partition's verified offset then moves past it. The
 * lag of a partition is its highest high watermark minus that offset; every report interval the
 * largest lag is printed, in Kafka's words and date format.
 */
import { CRC, LAST_OFFSET_DELTA, iterateBatches } from '../../protocol/records/index.js';

export interface ReplicaPartition {
  topic: string;
  partition: number;
}

/** What one replica answered for one partition in this round. */
export interface FetchedData {
  highWatermark: bigint;
  records: Buffer | null;
}

interface BatchInfo {
  lastOffset: bigint;
  checksum: number;
}

/** Kafka's TopicPartition.toString. */
export function partitionName(tp: ReplicaPartition): string {
  return `${tp.topic}-${tp.partition}`;
}

/** Kafka's tool date format, yyyy-MM-dd HH:mm:ss,SSS in local time. */
export function toolDate(ms: number): string {
  const d = new Date(ms);
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${two(d.getMonth() + 1)}-${two(d.getDate())} ${two(d.getHours())}:${two(d.getMinutes())}:${two(d.getSeconds())},${String(d.getMilliseconds()).padStart(3, '0')}`;
}

/** Last offset and checksum of each entry: a v2 batch, or a legacy (magic 0/1) message. */
function* batchesOf(records: Buffer | null): Generator<BatchInfo> {
  if (!records) return;
  for (const e of iterateBatches(records)) {
    const base = e.buf.readBigInt64BE(e.start);
    if (e.magic === 2) yield { lastOffset: base + BigInt(e.buf.readInt32BE(e.start + LAST_OFFSET_DELTA)), checksum: e.buf.readUInt32BE(e.start + CRC) };
    else yield { lastOffset: base, checksum: e.buf.readUInt32BE(e.start + 12) }; // a legacy entry's CRC follows offset and size
  }
}

/** Replicas whose last offsets differ: the tool cannot go on (Kafka exits 1). */
export class ReplicasDivergedError extends Error {
  override name = 'ReplicasDivergedError';
}

export class ReplicaBuffer {
  private readonly fetchOffsets = new Map<string, bigint>();
  private readonly fetched = new Map<string, Map<number, FetchedData>>();
  private lastReportAt: number;

  constructor(
    private readonly partitions: readonly ReplicaPartition[],
    initialOffsets: ReadonlyMap<string, bigint>,
    private readonly reportIntervalMs: number,
    now: number,
  ) {
    this.lastReportAt = now;
    for (const tp of partitions) {
      this.fetched.set(partitionName(tp), new Map());
      this.fetchOffsets.set(partitionName(tp), initialOffsets.get(partitionName(tp)) ?? 0n);
    }
  }

  /** Where the next round fetches this partition from (every replica alike). */
  offset(tp: ReplicaPartition): bigint {
    return this.fetchOffsets.get(partitionName(tp))!;
  }

  add(tp: ReplicaPartition, replicaId: number, data: FetchedData): void {
    this.fetched.get(partitionName(tp))?.set(replicaId, data);
  }

  /**
   * Compares this round's data (then forgets it), prints a checksum mismatch or, when the
   * report interval has passed, the max lag line; throws ReplicasDivergedError (after printing
   * Kafka's line) when two replicas hold different offsets.
   */
  verify(println: (line: string) => void, now: () => number = Date.now): void {
    let maxLag = -1n;
    let offsetWithMaxLag = -1n;
    let maxLagPartition: string | null = null;
    for (const tp of this.partitions) {
      const name = partitionName(tp);
      const perReplica = this.fetched.get(name)!;
      const iterators = [...perReplica].map(([replicaId, data]) => ({ replicaId, data, batches: batchesOf(data.records) }));
      let maxHw = -1n;
      for (const { data } of iterators) if (data.highWatermark > maxHw) maxHw = data.highWatermark;
      let inAllReplicas = iterators.length > 0;
      while (inAllReplicas) {
        let first: (BatchInfo & { replicaId: number }) | null = null;
        for (const { replicaId, data, batches } of iterators) {
          const next = batches.next();
          // Only what every replica holds below its high watermark is compared.
          if (next.done || next.value.lastOffset >= data.highWatermark) {
            inAllReplicas = false;
            continue;
          }
          const batch = next.value;
          if (first === null) {
            first = { ...batch, replicaId };
            continue;
          }
          if (first.lastOffset !== batch.lastOffset) {
            println(
              `${toolDate(now())}: partition ${name}: replica ${first.replicaId}'s offset ${first.lastOffset} doesn't match replica ${replicaId}'s offset ${batch.lastOffset}`,
            );
            throw new ReplicasDivergedError(`partition ${name}: replicas ${first.replicaId} and ${replicaId} hold different offsets`);
          }
          if (first.checksum !== batch.checksum) {
            println(
              `${toolDate(now())}: partition ${name} has unmatched checksum at offset ${batch.lastOffset}; replica ${first.replicaId}'s checksum ${first.checksum}; replica ${replicaId}'s checksum ${batch.checksum}`,
            );
          }
        }
        if (inAllReplicas && first !== null) this.fetchOffsets.set(name, first.lastOffset + 1n);
      }
      const offset = this.fetchOffsets.get(name)!;
      if (maxHw - offset > maxLag) {
        offsetWithMaxLag = offset;
        maxLag = maxHw - offset;
        maxLagPartition = name;
      }
      perReplica.clear();
    }
    const at = now();
    if (at - this.lastReportAt > this.reportIntervalMs) {
      println(
        `${toolDate(at)}: max lag is ${maxLag} for partition ${maxLagPartition} at offset ${offsetWithMaxLag} among ${this.partitions.length} partitions`,
      );
      this.lastReportAt = at;
    }
  }
}
