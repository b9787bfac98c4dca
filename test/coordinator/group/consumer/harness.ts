/**
 * A consumer-group shard driven by hand: a fake clock and timers that fire only when the test
 * advances time, records replayed as the runtime does and kept encoded, so a test can reload a
 * fresh shard from them and compare.
 */
import type { ShardContext, TimerOperation } from '../../../../src/coordinator/runtime/types.js';
import { GroupShard } from '../../../../src/coordinator/group/group-shard.js';
import { decodeRecord, encodeRecord, type CoordinatorRecord } from '../../../../src/coordinator/group/records.js';
import type { EncodedRecord } from '../../../../src/coordinator/runtime/types.js';
import type { AssignmentSpec, ServerAssignor, TargetAssignment } from '../../../../src/coordinator/group/assignors/types.js';
import type { ClusterTopic, ClusterTopics, ConsumerGroupEnv } from '../../../../src/coordinator/group/consumer/settings.js';
import { consumerGroupHeartbeat, type ConsumerHeartbeatRequest, type ConsumerHeartbeatResponse } from '../../../../src/coordinator/group/consumer/heartbeat.js';
import type { ConsumerGroup } from '../../../../src/coordinator/group/consumer/consumer-group.js';
import type { OperationResult } from '../../../../src/coordinator/runtime/types.js';
import { TEST_CONFIG } from '../harness.js';
import { compileSubscriptionRegex } from '../../../../src/coordinator/group/subscription-regex.js';
import assert from 'node:assert/strict';
import { randomUuid } from '../../../../src/protocol/primitives/index.js';

/** A tiny assignor for these tests: every subscribed partition, round-robin over the members by id. */
export const roundRobin: ServerAssignor = {
  name: 'rr',
  assign(spec: AssignmentSpec): TargetAssignment {
    const out: TargetAssignment = new Map();
    const ids = [...spec.members.keys()].sort();
    for (const id of ids) out.set(id, new Map());
    let i = 0;
    for (const t of [...spec.topics.values()].sort((a, b) => a.name.localeCompare(b.name))) {
      for (let p = 0; p < t.partitionCount; p++) {
        const subscribers = ids.filter((id) => spec.members.get(id)!.subscribedTopicIds.has(t.topicId));
        if (subscribers.length === 0) continue;
        const id = subscribers[i++ % subscribers.length]!;
        const m = out.get(id)!;
        m.set(t.topicId, [...(m.get(t.topicId) ?? []), p]);
      }
    }
    return out;
  },
};

export class FakeTopics implements ClusterTopics {
  readonly topics = new Map<string, ClusterTopic>();
  add(name: string, partitions: number, racks: string[] = []): ClusterTopic {
    const t: ClusterTopic = { topicId: randomUuid(), name, partitionCount: partitions, racks: () => racks };
    this.topics.set(name, t);
    return t;
  }
  byName(name: string): ClusterTopic | undefined {
    return this.topics.get(name);
  }
  names(): Iterable<string> {
    return this.topics.keys();
  }
  /** Tests change `topics` directly: its content is the generation. */
  private readonly generations = new Map<string, number>();
  generation(): number {
    const key = [...this.topics.values()].map((t) => `${t.name}:${t.partitionCount}`).join(',');
    if (!this.generations.has(key)) this.generations.set(key, this.generations.size);
    return this.generations.get(key)!;
  }
}

export interface ConsumerHarness {
  shard: GroupShard;
  topics: FakeTopics;
  log: EncodedRecord[];
  now: number;
  heartbeat(req: Partial<ConsumerHeartbeatRequest>): ConsumerHeartbeatResponse;
  run<T>(op: (s: GroupShard, now: number) => OperationResult<T, CoordinatorRecord>): T;
  advance(ms: number): void;
  group(id?: string): ConsumerGroup;
  /** A fresh shard loaded from the records written so far. */
  reload(): GroupShard;
  timers: Map<string, { at: number; op: TimerOperation<CoordinatorRecord> }>;
}

export function consumerHarness(settings: Partial<ConsumerGroupEnv['settings']> = {}, topics = new FakeTopics()): ConsumerHarness {
  const timers = new Map<string, { at: number; op: TimerOperation<CoordinatorRecord> }>();
  const env: ConsumerGroupEnv = {
    settings: { sessionTimeoutMs: 45_000, heartbeatIntervalMs: 5_000, maxSize: 100, assignors: [roundRobin], ...settings },
    topics,
    compileRegex: compileSubscriptionRegex,
  };
  const h: ConsumerHarness = {
    now: 1_000_000,
    topics,
    log: [],
    timers,
    shard: undefined as unknown as GroupShard,
    run(op) {
      const res = op(h.shard, h.now);
      for (const r of res.records) {
        h.shard.replay(r, false);
        h.log.push(encodeRecord(r));
      }
      return res.response;
    },
    heartbeat(req) {
      return h.run((s, now) => consumerGroupHeartbeat(s, { ...BASE_REQUEST, ...req }, now));
    },
    advance(ms) {
      const until = h.now + ms;
      for (;;) {
        const due = [...timers].filter(([, t]) => t.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
        if (!due) break;
        timers.delete(due[0]);
        h.now = Math.max(h.now, due[1].at);
        h.run((_s, now) => due[1].op(now));
      }
      h.now = until;
    },
    group(id = 'g') {
      const g = h.shard.consumerGroups.get(id);
      if (!g) throw new Error(`no consumer group ${id}`);
      return g;
    },
    reload() {
      const s = new GroupShard(ctx(), TEST_CONFIG, undefined, env);
      for (const r of h.log) {
        const d = decodeRecord(r.key, r.value);
        if (d) s.replay(d, true);
      }
      return s;
    },
  };
  const ctx = (): ShardContext<CoordinatorRecord> => ({
    partition: 0,
    now: () => h.now,
    scheduleTimer: (key, delayMs, op) => void timers.set(key, { at: h.now + delayMs, op }),
    cancelTimer: (key) => void timers.delete(key),
    hasTimer: (key) => timers.has(key),
  });
  h.shard = new GroupShard(ctx(), TEST_CONFIG, undefined, env);
  return h;
}

export const BASE_REQUEST: ConsumerHeartbeatRequest = {
  groupId: 'g',
  memberId: '',
  memberEpoch: 0,
  instanceId: null,
  rackId: null,
  rebalanceTimeoutMs: -1,
  subscribedTopicNames: null,
  subscribedTopicRegex: null,
  serverAssignor: null,
  topicPartitions: null,
  apiVersion: 1,
  clientId: 'client',
  clientHost: '/127.0.0.1',
};

/** A joining heartbeat of `memberId` subscribing to `topics`. */
export const join = (memberId: string, topics: string[], over: Partial<ConsumerHeartbeatRequest> = {}): Partial<ConsumerHeartbeatRequest> => ({
  memberId,
  memberEpoch: 0,
  rebalanceTimeoutMs: 30_000,
  subscribedTopicNames: topics,
  topicPartitions: [],
  ...over,
});

/** Partitions of an assignment in the response as "topicName-p" strings, sorted. */
export function owned(topics: FakeTopics, res: ConsumerHeartbeatResponse): string[] {
  const byId = new Map([...topics.topics.values()].map((t) => [t.topicId, t.name]));
  return (res.assignment?.topicPartitions ?? []).flatMap((t) => t.partitions.map((p) => `${byId.get(t.topicId)}-${p}`)).sort();
}

/** The group as plain data, to compare a live shard with one reloaded from its records. */
export function snapshot(g: ConsumerGroup | undefined): unknown {
  if (!g) return undefined;
  const sortMap = <V>(m: ReadonlyMap<string, V>) => [...m].sort(([a], [b]) => a.localeCompare(b));
  return {
    groupEpoch: g.groupEpoch,
    assignmentEpoch: g.assignmentEpoch,
    state: g.state,
    subscription: sortMap(g.subscriptionMetadata).map(([n, t]) => [n, t.topicId, t.numPartitions]),
    members: sortMap(g.members).map(([id, m]) => [id, { ...m, assigned: sortMap(m.assigned), pendingRevocation: sortMap(m.pendingRevocation) }]),
    targets: sortMap(g.targets).map(([id, a]) => [id, sortMap(a)]),
  };
}

export function assertReplayable(h: ConsumerHarness, group = 'g'): void {
  assert.deepEqual(snapshot(h.reload().consumerGroups.get(group)), snapshot(h.shard.consumerGroups.get(group)));
}
