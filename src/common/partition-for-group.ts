/**
 * Which `__consumer_offsets` partition holds a group (and which `__transaction_state` partition
 * a transactional id): Kafka's `Utils.abs(groupId.hashCode()) % partitions`. Tools and other
 * brokers compute the same thing, so it must match bit for bit.
 */

/** Java's String.hashCode: over UTF-16 code units (what JS strings are), with int32 overflow. */
export function javaStringHashCode(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h;
}

/** Kafka's Utils.abs masks the sign bit (so Integer.MIN_VALUE maps to 0, not to itself). */
export function kafkaAbs(n: number): number {
  return n & 0x7fffffff;
}

export function partitionForGroup(groupId: string, partitions: number): number {
  return kafkaAbs(javaStringHashCode(groupId)) % partitions;
}
