/**
 * An in-memory CoordinatorLog for tests: records per partition, appends that can be made to
 * fail or to wait, so the runtime's durability and undo paths can be driven without a broker.
 */
import type { CoordinatorLog, EncodedRecord } from '../../src/coordinator/runtime/types.js';
import { ErrorCode, KafkaError } from '../../src/protocol/errors.js';

export class MemoryLog implements CoordinatorLog {
  readonly partitions = new Map<number, EncodedRecord[]>();
  failNext = 0;
  /** When set, appends wait for `release()`. */
  hold = false;
  private held: (() => void)[] = [];

  async append(partition: number, records: EncodedRecord[]): Promise<void> {
    if (this.hold) await new Promise<void>((r) => this.held.push(r));
    if (this.failNext > 0) {
      this.failNext--;
      throw new KafkaError(ErrorCode.NOT_ENOUGH_REPLICAS);
    }
    const list = this.partitions.get(partition) ?? [];
    list.push(...records);
    this.partitions.set(partition, list);
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

  async replay(partition: number, onRecord: (key: Buffer, value: Buffer | null) => void): Promise<void> {
    for (const r of this.partitions.get(partition) ?? []) onRecord(r.key, r.value);
  }

  all(): EncodedRecord[] {
    return [...this.partitions.values()].flat();
  }
}
