/**
 * Decoding helpers shared by the znode codecs (zk-data.ts, zk-consumer-znodes.ts): tolerant of
 * fields other Kafka versions add or omit, strict on the ones read, and naming the znode in every
 * error. Apart from the codecs so that each codec file reads as a table of znodes.
 */

import type { TopicPartitionRef } from './zk-client-types.js';

export const utf8 = (data: Buffer): string => data.toString('utf8');

export function parseObject(data: Buffer, what: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(utf8(data));
  } catch {
    throw new Error(`malformed ${what} znode: ${JSON.stringify(utf8(data).slice(0, 200))}`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error(`malformed ${what} znode: not a JSON object`);
  return v as Record<string, unknown>;
}

export function intField(o: Record<string, unknown>, key: string, what: string): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new Error(`malformed ${what} znode: ${key} is not an integer`);
  return v;
}

export function intList(v: unknown, what: string): number[] {
  if (!Array.isArray(v) || !v.every((x) => typeof x === 'number' && Number.isInteger(x))) throw new Error(`malformed ${what} znode: not a list of integers`);
  return v as number[];
}

/** `{"0":[1,2],...}` → Map, partitions in ascending order; a missing or non-object value is empty. */
export function partitionMap(v: unknown, what: string): Map<number, number[]> {
  const out = new Map<number, number[]>();
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return out;
  const entries = Object.entries(v as Record<string, unknown>)
    .map(([k, reps]) => [Number(k), intList(reps, what)] as const)
    .sort((a, b) => a[0] - b[0]);
  for (const [p, reps] of entries) {
    if (!Number.isInteger(p) || p < 0) throw new Error(`malformed ${what} znode: partition ${p}`);
    out.set(p, reps);
  }
  return out;
}

// Kafka writes partition maps in its hash map's order; ascending order reads the same to every
// JSON reader (Kafka's own included), so Fjord writes that.
export const partitionObject = (m: ReadonlyMap<number, readonly number[]>): Record<string, readonly number[]> =>
  Object.fromEntries([...m].sort((a, b) => a[0] - b[0]).map(([p, r]) => [String(p), r]));

export function topicPartitionList(v: unknown, what: string): TopicPartitionRef[] {
  if (!Array.isArray(v)) throw new Error(`malformed ${what} znode: partitions is not a list`);
  return v.map((e: unknown) => {
    if (typeof e !== 'object' || e === null) throw new Error(`malformed ${what} znode: partition entry`);
    const o = e as Record<string, unknown>;
    if (typeof o.topic !== 'string') throw new Error(`malformed ${what} znode: topic`);
    return { topic: o.topic, partition: intField(o, 'partition', what) };
  });
}
