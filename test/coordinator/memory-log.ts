/**
 * An in-memory CoordinatorLog for tests: records per partition, appends that can be made to
 * fail or to wait, so the runtime's durability and undo paths can be driven without a broker.
 */
import type { BatchContext, CoordinatorLog, EncodedRecord, TransactionalProducer } from '../../src/coordinator/runtime/types.js';
import { ErrorCode, KafkaError } from '../../src/protocol/errors.js';

export class MemoryLog implements CoordinatorLog {
  readonly partitions = new Map<number, EncodedRecord[]>();
  /** Per partition, what each entry of `partitions` was written as (index-aligned), and markers. */
  private readonly entries = new Map<number, ({ kind: 'record'; batch: BatchContext } | { kind: 'marker'; producerId: bigint; commit: boolean })[]>();
  failNext = 0;
  /** When set, appends wait for `release()`. */
  hold = false;
  private held: (() => void)[] = [];

  async append(partition: number, records: EncodedRecord[], _now?: number, producer?: TransactionalProducer): Promise<void> {
    if (this.hold) await new Promise<void>((r) => this.held.push(r));
    if (this.failNext > 0) {
      this.failNext--;
      throw new KafkaError(ErrorCode.NOT_ENOUGH_REPLICAS);
    }
    const batch: BatchContext = { producerId: producer?.producerId ?? -1n, isTransactional: producer !== undefined };
    const entries = this.entryList(partition);
    const list = this.partitions.get(partition) ?? [];
    list.push(...records);
    this.partitions.set(partition, list);
    entries.push(...records.map(() => ({ kind: 'record' as const, batch })));
  }

  /** A transaction marker (control batch) in the partition, as WriteTxnMarkers writes it. */
  appendMarker(partition: number, producerId: bigint, commit: boolean): void {
    this.entryList(partition).push({ kind: 'marker', producerId, commit });
  }

  private entryList(partition: number) {
    let e = this.entries.get(partition);
    if (!e) {
      // Records put in `partitions` directly by tests are plain (non-transactional) ones.
      e = (this.partitions.get(partition) ?? []).map(() => ({ kind: 'record' as const, batch: { producerId: -1n, isTransactional: false } }));
      this.entries.set(partition, e);
    }
    return e;
  }

  release(): void {
    this.hold = false;
    const h = this.held;
    this.held = [];
    for (const r of h) r();
  }

  get pendingAppends(): number {
    return this.held.length;
  }

  async replay(
    partition: number,
    onRecord: (key: Buffer, value: Buffer | null, batch?: BatchContext) => void,
    onMarker?: (producerId: bigint, commit: boolean) => void,
  ): Promise<void> {
    const records = this.partitions.get(partition) ?? [];
    const entries = this.entries.get(partition);
    if (!entries) {
      for (const r of records) onRecord(r.key, r.value);
      return;
    }
    // Records added to `partitions` directly after the first tracked append are plain ones.
    let i = 0;
    for (const e of entries) {
      if (e.kind === 'marker') onMarker?.(e.producerId, e.commit);
      else {
        const r = records[i++]!;
        onRecord(r.key, r.value, e.batch);
      }
    }
    for (; i < records.length; i++) onRecord(records[i]!.key, records[i]!.value);
  }

  all(): EncodedRecord[] {
    return [...this.partitions.values()].flat();
  }
}
