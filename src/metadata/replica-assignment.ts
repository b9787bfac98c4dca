/**
 * Where a new topic's replicas go: Kafka's AdminUtils.assignReplicasToBrokers, so a cluster of
 * Fjord brokers spreads partitions the way Kafka's would (same algorithm, same fixed-start
 * results Kafka documents). Pure: no I/O, randomness injectable.
 *
 * Rack-unaware: leaders round robin over the brokers (sorted by id) from a random start; the
 * followers of each partition sit at an increasing shift from the leader, the shift growing by one
 * after every full round, so the same broker sets do not repeat.
 * Rack-aware (every broker has a rack): the same round robin over a rack-alternated broker list,
 * and followers skip brokers on racks that already hold a replica until every rack holds one.
 */
import { ErrorCode, KafkaError } from '../protocol/errors.js';

export interface AssignableBroker {
  id: number;
  rack: string | null;
}

/** Kafka's RackAwareMode: enforced refuses a mix of brokers with and without racks; safe then ignores racks; disabled always does. */
export type RackAwareMode = 'enforced' | 'safe' | 'disabled';

export interface AssignOptions {
  /** Index in the (sorted or rack-alternated) broker list of partition `startPartitionId`'s leader; random when absent. */
  fixedStartIndex?: number;
  /** The first partition id to assign (partition addition continues after the existing ones). */
  startPartitionId?: number;
  /** In [0, 1), as Math.random (the default). */
  random?: () => number;
  rackAware?: RackAwareMode;
}

/** Returns partition -> replicas, preferred replica (leader) first. */
export function assignReplicas(
  brokers: readonly AssignableBroker[],
  numPartitions: number,
  replicationFactor: number,
  opts: AssignOptions = {},
): Map<number, number[]> {
  if (!Number.isInteger(numPartitions) || numPartitions <= 0) throw new KafkaError(ErrorCode.INVALID_PARTITIONS, 'Number of partitions must be larger than 0.');
  if (!Number.isInteger(replicationFactor) || replicationFactor <= 0) {
    throw new KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR, 'Replication factor must be larger than 0.');
  }
  if (replicationFactor > brokers.length) {
    throw new KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR, `Replication factor: ${replicationFactor} larger than available brokers: ${brokers.length}.`);
  }
  // Kafka's callers hand over the brokers sorted by id; do it here so every caller agrees.
  const sorted = [...brokers].sort((a, b) => a.id - b.id);
  const mode = opts.rackAware ?? 'enforced';
  const withRack = sorted.filter((b) => b.rack !== null).length;
  if (mode === 'enforced' && withRack > 0 && withRack < sorted.length) {
    throw new KafkaError(ErrorCode.INVALID_REPLICATION_FACTOR, 'Not all brokers have rack information for replica rack aware assignment.');
  }
  const random = opts.random ?? Math.random;
  const randomIndex = (n: number): number => Math.min(n - 1, Math.floor(random() * n));
  const rackAware = mode !== 'disabled' && withRack === sorted.length;
  const list = rackAware ? rackAlternatedList(sorted) : sorted.map((b) => b.id);
  const n = list.length;
  const startIndex = opts.fixedStartIndex !== undefined && opts.fixedStartIndex >= 0 ? opts.fixedStartIndex : randomIndex(n);
  let shift = opts.fixedStartIndex !== undefined && opts.fixedStartIndex >= 0 ? opts.fixedStartIndex : randomIndex(n);
  const racks = new Map(sorted.map((b) => [b.id, b.rack ?? '']));
  const numRacks = new Set(racks.values()).size;
  const out = new Map<number, number[]>();
  let partition = Math.max(0, opts.startPartitionId ?? 0);
  for (let i = 0; i < numPartitions; i++, partition++) {
    if (partition > 0 && partition % n === 0) shift += 1;
    const first = (partition + startIndex) % n;
    const replicas = [list[first]!];
    if (!rackAware) {
      for (let j = 0; j < replicationFactor - 1; j++) replicas.push(list[replicaIndex(first, shift, j, n)]!);
    } else {
      const racksUsed = new Set([racks.get(list[first]!)!]);
      const brokersUsed = new Set([list[first]!]);
      let k = 0;
      while (replicas.length < replicationFactor) {
        const broker = list[replicaIndex(first, shift * numRacks, k++, n)]!;
        const rack = racks.get(broker)!;
        // Skip a broker whose rack already has a replica while some rack has none, and a broker
        // that already has one while some broker has none.
        if ((!racksUsed.has(rack) || racksUsed.size === numRacks) && (!brokersUsed.has(broker) || brokersUsed.size === n)) {
          replicas.push(broker);
          racksUsed.add(rack);
          brokersUsed.add(broker);
        }
      }
    }
    out.set(partition, replicas);
  }
  return out;
}

/** Kafka's replicaIndex: the j-th follower's position, never the leader's (shift in 1..n-1). */
function replicaIndex(first: number, shift: number, j: number, n: number): number {
  return (first + 1 + ((shift + j) % (n - 1))) % n;
}

/** Brokers taken one rack at a time (racks in name order, brokers in id order): rack1:0,1 rack2:3 → 0,3,1. */
export function rackAlternatedList(brokers: readonly AssignableBroker[]): number[] {
  const byRack = new Map<string, number[]>();
  for (const b of [...brokers].sort((x, y) => x.id - y.id)) {
    const list = byRack.get(b.rack ?? '') ?? [];
    list.push(b.id);
    byRack.set(b.rack ?? '', list);
  }
  const racks = [...byRack.keys()].sort();
  const out: number[] = [];
  for (let round = 0; out.length < brokers.length; round++) {
    for (const r of racks) {
      const id = byRack.get(r)![round];
      if (id !== undefined) out.push(id);
    }
  }
  return out;
}

/**
 * For CreatePartitions / `--alter --partitions`: the new partitions continue the existing
 * pattern, starting from the broker of partition 0's leader (Kafka's AdminZkClient.addPartitions)
 * with partition 0's replication factor. Returns only the new partitions.
 */
export function assignAddedPartitions(
  brokers: readonly AssignableBroker[],
  existing: Map<number, number[]>,
  newTotal: number,
  topic = 'the topic',
): Map<number, number[]> {
  const p0 = existing.get(0);
  if (!p0 || p0.length === 0) {
    throw new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, `Unexpected existing replica assignment for topic '${topic}', partition id 0 is missing.`);
  }
  const toAdd = newTotal - existing.size;
  if (toAdd <= 0) {
    throw new KafkaError(
      ErrorCode.INVALID_PARTITIONS,
      `The number of partitions for a topic can only be increased. Topic ${topic} currently has ${existing.size} partitions, ${newTotal} would not be an increase.`,
    );
  }
  const sorted = [...brokers].sort((a, b) => a.id - b.id);
  const startIndex = Math.max(
    0,
    sorted.findIndex((b) => b.id >= p0[0]!),
  );
  return assignReplicas(sorted, toAdd, p0.length, { fixedStartIndex: startIndex, startPartitionId: existing.size });
}
