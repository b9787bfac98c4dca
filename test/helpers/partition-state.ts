/**
 * White-box reads of a partition's state through the seam (`PartitionShards.partitionStates`),
 * the same at any num.io.threads: with shard workers a user topic's `Partition` lives on another
 * thread, so a test asks its owner instead of holding it.
 */
import type { Broker } from '../../src/server/broker.js';
import { shardsOf } from '../../src/server/broker-services.js';
import type { PartitionState, PartitionStatesOptions } from '../../src/replication/shards/partition-shards.js';

/** The partition's state, or undefined when no shard hosts it (no log open). */
export async function partitionState(
  b: { broker: Broker },
  topic: string,
  partition: number,
  opts: PartitionStatesOptions = {},
): Promise<PartitionState | undefined> {
  const [state] = await shardsOf(b.broker.services).partitionStates([{ topic, partition }], opts);
  return state;
}

/** The partition's state with its log's effective config; fails the test when no shard hosts it. */
export async function hostedConfig(b: { broker: Broker }, topic: string, partition: number): Promise<NonNullable<PartitionState['config']>> {
  const state = await partitionState(b, topic, partition, { config: true });
  if (!state?.config) throw new Error(`${topic}-${partition} is not hosted`);
  return state.config;
}
