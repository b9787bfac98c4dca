/**
 * Choosing a partition. Keyed records go where the Java client sends them: murmur2 of the key
 * bytes, made positive, modulo the partition count, so Fjord producers and Java producers agree
 * on which partition holds a key. Unkeyed records stick to one partition until the batch being
 * built there is closed, then move on (Kafka's sticky partitioning): fewer, fuller batches.
 */

/** Kafka's murmur2 (seed 0x9747b28c), as a signed 32-bit int like Java's. */
export function murmur2(data: Buffer): number {
  const length = data.length;
  const m = 0x5bd1e995;
  const r = 24;
  let h = (0x9747b28c ^ length) | 0;
  const whole = length & ~3;
  for (let i = 0; i < whole; i += 4) {
    let k = data[i]! | (data[i + 1]! << 8) | (data[i + 2]! << 16) | (data[i + 3]! << 24);
    k = Math.imul(k, m);
    k ^= k >>> r;
    k = Math.imul(k, m);
    h = Math.imul(h, m);
    h ^= k;
  }
  const tail = length & 3;
  if (tail === 3) h ^= data[whole + 2]! << 16;
  if (tail >= 2) h ^= data[whole + 1]! << 8;
  if (tail >= 1) {
    h ^= data[whole]!;
    h = Math.imul(h, m);
  }
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return h | 0;
}

export function toPositive(n: number): number {
  return n & 0x7fffffff;
}

export function partitionForKey(key: Buffer, numPartitions: number): number {
  return toPositive(murmur2(key)) % numPartitions;
}

/** Remembers the current sticky partition per topic. */
export class StickyPartitioner {
  private readonly current = new Map<string, number>();

  /** `available` (partitions with a leader) may be a function: it is only needed when moving on. */
  partition(topic: string, numPartitions: number, available?: readonly number[] | (() => readonly number[])): number {
    const cur = this.current.get(topic);
    if (cur !== undefined && cur < numPartitions) return cur;
    return this.next(topic, numPartitions, typeof available === 'function' ? available() : available, -1);
  }

  /** Called when the batch for `topic`'s sticky partition was closed: pick a different one. */
  onBatchClosed(topic: string, numPartitions: number, available?: readonly number[]): void {
    const prev = this.current.get(topic);
    if (prev === undefined) return;
    this.next(topic, numPartitions, available, prev);
  }

  private next(topic: string, numPartitions: number, available: readonly number[] | undefined, avoid: number): number {
    const choices = (available && available.length > 0 ? available : [...Array(numPartitions).keys()]).filter((p) => p !== avoid || numPartitions === 1);
    const pool = choices.length > 0 ? choices : [0];
    const chosen = pool[Math.floor(Math.random() * pool.length)]!;
    this.current.set(topic, chosen);
    return chosen;
  }
}
