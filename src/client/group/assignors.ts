/**
 * Partition assignors, run by the group leader. Same names and results as Java's, so a Fjord
 * consumer can share a group with Java consumers: `range` (per topic, contiguous ranges to
 * members sorted by id), `roundrobin` (all partitions dealt in turn), and `cooperative-sticky`
 * (keep what members own, balance the rest, and never hand a partition straight from one member
 * to another in one round: it is first revoked, then assigned in the follow-up rebalance).
 */

export interface MemberSubscription {
  memberId: string;
  topics: string[];
  /** Partitions the member owned in `generation` (cooperative protocol). */
  ownedPartitions: Map<string, number[]>;
  generation: number;
}

/** memberId → topic → partitions. */
export type GroupAssignment = Map<string, Map<string, number[]>>;

export interface Assignor {
  readonly name: string;
  /** Cooperative assignors let members keep partitions across a rebalance. */
  readonly cooperative: boolean;
  assign(members: readonly MemberSubscription[], partitionsPerTopic: ReadonlyMap<string, number>): GroupAssignment;
}

function emptyAssignment(members: readonly MemberSubscription[]): GroupAssignment {
  return new Map(members.map((m) => [m.memberId, new Map<string, number[]>()]));
}

function add(a: GroupAssignment, member: string, topic: string, partition: number): void {
  const byTopic = a.get(member)!;
  const list = byTopic.get(topic) ?? [];
  list.push(partition);
  byTopic.set(topic, list);
}

export const rangeAssignor: Assignor = {
  name: 'range',
  cooperative: false,
  assign(members, partitionsPerTopic) {
    const out = emptyAssignment(members);
    const topics = [...new Set(members.flatMap((m) => m.topics))].sort();
    for (const topic of topics) {
      const n = partitionsPerTopic.get(topic);
      if (n === undefined) continue;
      const consumers = members
        .filter((m) => m.topics.includes(topic))
        .map((m) => m.memberId)
        .sort();
      const per = Math.floor(n / consumers.length);
      const extra = n % consumers.length;
      consumers.forEach((member, i) => {
        const start = per * i + Math.min(i, extra);
        const length = per + (i < extra ? 1 : 0);
        for (let p = start; p < start + length; p++) add(out, member, topic, p);
      });
    }
    return out;
  },
};

export const roundRobinAssignor: Assignor = {
  name: 'roundrobin',
  cooperative: false,
  assign(members, partitionsPerTopic) {
    const out = emptyAssignment(members);
    const sorted = [...members].sort((a, b) => (a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0));
    const topics = [...new Set(members.flatMap((m) => m.topics))].filter((t) => partitionsPerTopic.has(t)).sort();
    let next = 0;
    for (const topic of topics) {
      for (let p = 0; p < partitionsPerTopic.get(topic)!; p++) {
        // Deal to the next member in the circle that subscribes to this topic.
        for (let tries = 0; tries < sorted.length; tries++) {
          const m = sorted[next % sorted.length]!;
          next++;
          if (m.topics.includes(topic)) {
            add(out, m.memberId, topic, p);
            break;
          }
        }
      }
    }
    return out;
  },
};

export const cooperativeStickyAssignor: Assignor = {
  name: 'cooperative-sticky',
  cooperative: true,
  assign(members, partitionsPerTopic) {
    const sorted = [...members].sort((a, b) => (a.memberId < b.memberId ? -1 : 1));
    const all: [string, number][] = [];
    for (const topic of [...new Set(members.flatMap((m) => m.topics))].sort()) {
      const n = partitionsPerTopic.get(topic);
      if (n !== undefined) for (let p = 0; p < n; p++) all.push([topic, p]);
    }
    // Previous owner of each partition: the claim from the highest generation wins.
    const owner = new Map<string, { member: string; generation: number }>();
    for (const m of sorted) {
      for (const [topic, parts] of m.ownedPartitions) {
        for (const p of parts) {
          const k = `${topic}:${p}`;
          const prev = owner.get(k);
          if (!prev || m.generation > prev.generation) owner.set(k, { member: m.memberId, generation: m.generation });
        }
      }
    }
    const load = new Map<string, [string, number][]>(sorted.map((m) => [m.memberId, []]));
    const subscribes = (member: string, topic: string): boolean => sorted.find((m) => m.memberId === member)!.topics.includes(topic);
    const unassigned: [string, number][] = [];
    for (const tp of all) {
      const o = owner.get(`${tp[0]}:${tp[1]}`);
      if (o && load.has(o.member) && subscribes(o.member, tp[0])) load.get(o.member)!.push(tp);
      else unassigned.push(tp);
    }
    // Members above their fair share give the surplus back.
    const maxQuota = Math.ceil(all.length / Math.max(1, sorted.length));
    for (const list of load.values()) while (list.length > maxQuota) unassigned.push(list.pop()!);
    for (const tp of unassigned) {
      const candidates = sorted.filter((m) => m.topics.includes(tp[0]));
      if (candidates.length === 0) continue;
      const least = candidates.reduce((a, b) => (load.get(b.memberId)!.length < load.get(a.memberId)!.length ? b : a));
      load.get(least.memberId)!.push(tp);
    }
    // Rebalance further while someone has two more than another subscriber could take.
    let moved = true;
    while (moved) {
      moved = false;
      for (const rich of sorted) {
        const richList = load.get(rich.memberId)!;
        for (let i = richList.length - 1; i >= 0; i--) {
          const tp = richList[i]!;
          const poor = sorted.find((m) => m.topics.includes(tp[0]) && load.get(m.memberId)!.length + 1 < richList.length);
          if (!poor) continue;
          richList.splice(i, 1);
          load.get(poor.memberId)!.push(tp);
          moved = true;
          break;
        }
      }
    }
    const out = emptyAssignment(members);
    for (const [member, list] of load) {
      for (const [topic, p] of list) {
        const o = owner.get(`${topic}:${p}`);
        // Owned by someone else last generation: withhold until that member revoked it.
        if (o && o.member !== member && load.has(o.member)) continue;
        add(out, member, topic, p);
      }
    }
    for (const byTopic of out.values()) for (const parts of byTopic.values()) parts.sort((a, b) => a - b);
    return out;
  },
};

export const ASSIGNORS: Readonly<Record<string, Assignor>> = {
  range: rangeAssignor,
  roundrobin: roundRobinAssignor,
  'cooperative-sticky': cooperativeStickyAssignor,
};

/** Accepts Kafka's short names and Java class names (…RangeAssignor, …CooperativeStickyAssignor). */
export function assignorByName(name: string): Assignor {
  const n = name.trim();
  const short = n.includes('.') ? n.slice(n.lastIndexOf('.') + 1) : n;
  const table: Record<string, string> = {
    RangeAssignor: 'range',
    RoundRobinAssignor: 'roundrobin',
    CooperativeStickyAssignor: 'cooperative-sticky',
  };
  const a = ASSIGNORS[table[short] ?? short];
  if (!a) throw new Error(`unknown partition assignment strategy "${name}" (range, roundrobin, cooperative-sticky)`);
  return a;
}
