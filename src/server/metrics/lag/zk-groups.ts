/**
 * The consumer groups of Kafka 0.8's ZooKeeper consumer (`/consumers/<group>/offsets/<t>/<p>` and
 * `/consumers/<group>/ids`), read for the lag metrics in cluster mode. Such a group has no
 * coordinator, so one broker speaks for all of them: the active controller (as it does for
 * kafka_brokers); it reads them in the background refresh (lag-refresh.ts), never at scrape time,
 * and at most MAX_ZK_GROUPS groups per refresh (the first ones in name order).
 */
import type { ZkConsumerOffsets } from '../../../metadata/zk/zk-consumer-offsets.js';

/** What the lag refresh reads of ZooKeeper's consumer groups. */
export type ZkGroupStore = Pick<ZkConsumerOffsets, 'groups' | 'groupOffsets' | 'members'>;

/** A ZooKeeper-stored group as the lag families read it (the shape of the group coordinator's). */
export interface ZkGroup {
  group: string;
  members: number;
  offsets: ReadonlyMap<string, ReadonlyMap<number, { offset: bigint }>>;
}

/** Groups read per refresh: the refresh's ZooKeeper reads stay bounded whatever /consumers holds. */
export const MAX_ZK_GROUPS = 1000;

/** Every group under /consumers with at least one stored offset, with its live members' count. */
export async function readZkGroups(store: ZkGroupStore, max = MAX_ZK_GROUPS): Promise<ZkGroup[]> {
  const out: ZkGroup[] = [];
  for (const group of (await store.groups()).slice(0, max)) {
    const stored = await store.groupOffsets(group);
    const offsets = new Map<string, Map<number, { offset: bigint }>>();
    for (const [topic, parts] of stored) {
      if (parts.size === 0) continue;
      offsets.set(topic, new Map([...parts].map(([p, offset]) => [p, { offset }])));
    }
    if (offsets.size === 0) continue;
    out.push({ group, members: (await store.members(group)).size, offsets });
  }
  return out;
}
