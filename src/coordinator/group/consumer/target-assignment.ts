/**
 * The group-wide half of a heartbeat: the metadata of the topics the members subscribe to
 * (resolved against the cluster: a topic created, deleted or grown changes it and bumps the
 * group epoch), and the target assignment the group's server-side assignor computes from it
 * for that epoch, as records (only the members whose target changed get one).
 */
import { type AssignmentSpec, AssignorError, type AssignorMember, type AssignorTopic, type ServerAssignor } from '../assignors/types.js';
import type { ConsumerGroup, SubscribedTopic } from './consumer-group.js';
import type { ConsumerGroupRecord } from './consumer-records.js';
import { targetEpochRecord, targetMemberRecord } from './consumer-replay.js';
import { type Assignment, type ConsumerMember, EMPTY_ASSIGNMENT, assignmentsEqual } from './member.js';
import type { ConsumerGroupEnv } from './settings.js';
import { matchTopicsInSlices } from '../subscription-regex.js';

/** Compiled patterns and what they matched, per topic generation (bounded: cleared when full). */
const regexMatches = new Map<string, { generation: number; names: string[] }>();
const MAX_CACHED_REGEXES = 1_000;

/**
 * The topic names a member subscribes to: its list, or what its regex matches now. A pattern is
 * matched against the topic names once per change of the cluster's topics, not per heartbeat.
 */
export function memberTopicNames(m: ConsumerMember, env: ConsumerGroupEnv, regexCache: Map<string, string[]>): readonly string[] {
  const pattern = m.subscribedTopicRegex;
  if (pattern === null) return m.subscribedTopicNames;
  const cached = regexCache.get(pattern);
  if (cached) return cached;
  const generation = env.topics.generation();
  let entry = regexMatches.get(pattern);
  if (!entry || entry.generation !== generation) {
    const compiled = env.compileRegex(pattern);
    const names: string[] = [];
    if (compiled.ok) for (const n of subscribableTopics(env)) if (compiled.matches(n)) names.push(n);
    entry = cacheMatches(pattern, generation, names);
  }
  regexCache.set(pattern, entry.names);
  return entry.names;
}

/** Internal topics are never matched by a subscription, as Kafka's consumers exclude them. */
const subscribableTopics = (env: ConsumerGroupEnv): string[] => [...env.topics.names()].filter((n) => !n.startsWith('__'));

function cacheMatches(pattern: string, generation: number, names: string[]): { generation: number; names: string[] } {
  if (regexMatches.size >= MAX_CACHED_REGEXES) regexMatches.clear();
  const entry = { generation, names };
  regexMatches.set(pattern, entry);
  return entry;
}

/** Matching in progress, per generation and pattern: concurrent heartbeats wait on the same one. */
const preparing = new Map<string, Promise<void>>();

/**
 * Matches `pattern` against the cluster's topics in slices that yield to the event loop, and
 * caches what it matched for the current topic generation, so that the heartbeat's operation
 * (which runs in one go on the event loop) finds it done: a near-limit pattern over thousands of
 * long names takes a second, and other groups' requests must not wait behind it. A pattern that
 * does not compile is left to the operation, which refuses it.
 */
export function prepareRegexMatches(pattern: string, env: ConsumerGroupEnv): Promise<void> {
  const generation = env.topics.generation();
  if (regexMatches.get(pattern)?.generation === generation) return Promise.resolve();
  const key = `${generation}\u0000${pattern}`;
  let done = preparing.get(key);
  if (!done) {
    done = (async () => {
      const compiled = env.compileRegex(pattern);
      if (!compiled.ok) return;
      const names = await matchTopicsInSlices(compiled, subscribableTopics(env));
      // Topics changed meanwhile: the operation matches again (synchronously) if it must.
      if (env.topics.generation() === generation) cacheMatches(pattern, generation, names);
    })().finally(() => preparing.delete(key));
    preparing.set(key, done);
  }
  return done;
}

/** Prepares again, in the background, every cached pattern the cluster's topics changed under. */
export async function prepareStaleRegexMatches(env: ConsumerGroupEnv): Promise<void> {
  const generation = env.topics.generation();
  for (const [pattern, entry] of [...regexMatches]) if (entry.generation !== generation) await prepareRegexMatches(pattern, env);
}

/** The metadata of every topic some member subscribes to, as the cluster has it now. */
export function subscriptionMetadata(
  members: Iterable<ConsumerMember>,
  env: ConsumerGroupEnv,
  regexCache: Map<string, string[]>,
): Map<string, SubscribedTopic> {
  const out = new Map<string, SubscribedTopic>();
  for (const m of members) {
    for (const name of memberTopicNames(m, env, regexCache)) {
      if (out.has(name)) continue;
      const t = env.topics.byName(name);
      if (!t) continue;
      const racks = new Map<number, readonly string[]>();
      for (let p = 0; p < t.partitionCount; p++) {
        const r = t.racks(p);
        if (r.length > 0) racks.set(p, r);
      }
      out.set(name, { topicId: t.topicId, name, numPartitions: t.partitionCount, racks });
    }
  }
  return out;
}

export function subscriptionsEqual(a: ReadonlyMap<string, SubscribedTopic>, b: ReadonlyMap<string, SubscribedTopic>): boolean {
  if (a.size !== b.size) return false;
  for (const [name, t] of a) {
    const u = b.get(name);
    if (!u || u.topicId !== t.topicId || u.numPartitions !== t.numPartitions || u.racks.size !== t.racks.size) return false;
    for (const [p, r] of t.racks) if ((u.racks.get(p) ?? []).join(',') !== r.join(',')) return false;
  }
  return true;
}

/**
 * The assignor the group uses: the one most members ask for (ServerAssignor), else the first
 * configured. Ties go to the one configured first.
 */
export function groupAssignor(members: Iterable<ConsumerMember>, assignors: readonly ServerAssignor[]): ServerAssignor | undefined {
  const counts = new Map<string, number>();
  for (const m of members) if (m.serverAssignor !== null) counts.set(m.serverAssignor, (counts.get(m.serverAssignor) ?? 0) + 1);
  let best = assignors[0];
  let bestCount = 0;
  for (const a of assignors) {
    const c = counts.get(a.name) ?? 0;
    if (c > bestCount) {
      best = a;
      bestCount = c;
    }
  }
  return best;
}

export interface TargetResult {
  readonly targets: ReadonlyMap<string, Assignment>;
  readonly records: ConsumerGroupRecord[];
}

/**
 * The target assignment of epoch `groupEpoch` for `members`, and the records that store it.
 * null when the assignor could not serve the spec (the previous target stays).
 */
export function computeTarget(
  group: ConsumerGroup,
  members: ReadonlyMap<string, ConsumerMember>,
  subscription: ReadonlyMap<string, SubscribedTopic>,
  groupEpoch: number,
  env: ConsumerGroupEnv,
  regexCache: Map<string, string[]>,
  /** A static member's new id -> the id it replaced, whose target it takes over. */
  inherits: ReadonlyMap<string, string> = new Map(),
): TargetResult | null {
  const assignor = groupAssignor(members.values(), env.settings.assignors);
  if (!assignor) return null;
  const topics = new Map<string, AssignorTopic>();
  for (const t of subscription.values()) {
    topics.set(t.topicId, { topicId: t.topicId, name: t.name, partitionCount: t.numPartitions, partitionRacks: (p) => t.racks.get(p) ?? [] });
  }
  const specMembers = new Map<string, AssignorMember>();
  let first: string | null = null;
  let homogeneous = true;
  for (const m of members.values()) {
    const ids = new Set<string>();
    for (const n of memberTopicNames(m, env, regexCache)) {
      const t = subscription.get(n);
      if (t) ids.add(t.topicId);
    }
    const key = [...ids].sort().join(',');
    if (first === null) first = key;
    else if (key !== first) homogeneous = false;
    const current = group.targets.get(m.memberId) ?? group.targets.get(inherits.get(m.memberId) ?? '') ?? EMPTY_ASSIGNMENT;
    specMembers.set(m.memberId, { memberId: m.memberId, instanceId: m.instanceId, rackId: m.rackId, subscribedTopicIds: ids, currentTarget: current });
  }
  const spec: AssignmentSpec = { members: specMembers, topics, subscriptionType: homogeneous ? 'homogeneous' : 'heterogeneous' };
  let raw: Map<string, Map<string, number[]>>;
  try {
    raw = assignor.assign(spec);
  } catch (err) {
    if (err instanceof AssignorError) return null;
    throw err;
  }
  const targets = new Map<string, Assignment>();
  const records: ConsumerGroupRecord[] = [];
  for (const id of members.keys()) {
    const a = new Map<string, number[]>();
    for (const [t, ps] of raw.get(id) ?? [])
      if (ps.length > 0)
        a.set(
          t,
          [...ps].sort((x, y) => x - y),
        );
    targets.set(id, a);
    const before = group.targets.get(id);
    if (!before || !assignmentsEqual(before, a)) records.push(targetMemberRecord(group.groupId, id, a));
  }
  records.push(targetEpochRecord(group.groupId, groupEpoch));
  return { targets, records };
}
