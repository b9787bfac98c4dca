/**
 * The ways a reassignment is asked for, cancelled or listed: `/admin/reassign_partitions` (the
 * `--zookeeper` tools), AlterPartitionReassignments and ListPartitionReassignments. Each builds
 * the target assignment and hands the partition to onPartitionReassignment (reassignment.ts);
 * the per-partition results are Kafka's. A new controller starts here too: pending ZooKeeper
 * requests first, then the reassignments the topic znodes say are in progress.
 */
import { ErrorCode, errorName } from '../protocol/errors.js';
import { ControllerMovedError } from '../metadata/zk/zk-client-types.js';
import { tpKey } from '../common/partition-keys.js';
import type { ControllerContext, TopicPartition } from './context.js';
import { ControllerErrors, type ControllerRuntime } from './env.js';
import { maybeRemoveFromZkReassignment, maybeResumeReassignments, onPartitionReassignment } from './reassignment.js';
import {
  fullAssignment,
  isBeingReassigned,
  originReplicas,
  reassignTo,
  validateReplicas,
  type ApiResult,
  type ListedReassignment,
  type ReplicaAssignment,
} from './reassignment-state.js';
import { messageOf } from '../common/errors.js';

const NONE: ApiResult = { errorCode: ErrorCode.NONE, message: null };
const UNKNOWN_PARTITION: ApiResult = { errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, message: 'The partition does not exist.' };

/** Kafka's maybeTriggerPartitionReassignment: per partition, NONE or why it was not started. */
async function maybeTriggerPartitionReassignment(
  rt: ControllerRuntime,
  reassignments: Map<string, { tp: TopicPartition; a: ReplicaAssignment }>,
): Promise<Map<string, ApiResult>> {
  const out = new Map<string, ApiResult>();
  for (const [key, { tp, a }] of reassignments) {
    if (rt.ctx.isTopicQueuedForDeletion(tp.topic)) {
      rt.log.info({ partition: key }, 'reassignment skipped: the topic is being deleted');
      out.set(key, UNKNOWN_PARTITION);
    } else if (rt.ctx.replicasFor(tp).length === 0) {
      out.set(key, UNKNOWN_PARTITION);
    } else {
      try {
        await onPartitionReassignment(rt, tp, a);
        out.set(key, NONE);
      } catch (err) {
        if (err instanceof ControllerMovedError) throw err;
        rt.log.error({ partition: key, err: messageOf(err) }, 'reassignment failed');
        out.set(key, { errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, message: 'The server experienced an unexpected error when processing the request.' });
      }
    }
  }
  return out;
}

/** Kafka's maybeBuildReassignment: `target` null reverts to the original replicas (undefined if nothing is in progress). */
function maybeBuildReassignment(ctx: ControllerContext, tp: TopicPartition, target: readonly number[] | null): ReplicaAssignment | undefined {
  const current = fullAssignment(ctx, tp);
  if (isBeingReassigned(current)) return reassignTo(current, target ?? originReplicas(current));
  return target ? reassignTo(current, target) : undefined;
}

/** `/admin/reassign_partitions` was written (or the controller just started): returns the partitions started. */
export async function processZkPartitionReassignment(rt: ControllerRuntime): Promise<Set<string>> {
  const requested = await rt.zk.getPartitionReassignment(rt.watch.reassignment);
  if (!requested) return new Set();
  const toStart = new Map<string, { tp: TopicPartition; a: ReplicaAssignment }>();
  const results = new Map<string, ApiResult>();
  for (const r of requested) {
    const tp = { topic: r.topic, partition: r.partition };
    // Kafka does not check these; an empty list would delete every replica, so they are refused.
    if (r.replicas.length === 0 || new Set(r.replicas).size !== r.replicas.length || r.replicas.some((b) => b < 0)) {
      results.set(tpKey(r.topic, r.partition), { errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT, message: null });
      continue;
    }
    const a = maybeBuildReassignment(rt.ctx, tp, r.replicas);
    if (a) toStart.set(tpKey(r.topic, r.partition), { tp, a });
    else results.set(tpKey(r.topic, r.partition), { errorCode: ControllerErrors.NO_REASSIGNMENT_IN_PROGRESS, message: null });
  }
  for (const [k, v] of await maybeTriggerPartitionReassignment(rt, toStart)) results.set(k, v);
  const failed = new Set([...results].filter(([, v]) => v.errorCode !== ErrorCode.NONE).map(([k]) => k));
  if (failed.size > 0) {
    rt.log.warn(
      { failed: Object.fromEntries([...results].filter(([k]) => failed.has(k)).map(([k, v]) => [k, errorName(v.errorCode)])) },
      'reassignment through ZooKeeper failed for some partitions',
    );
    await maybeRemoveFromZkReassignment(rt, (r) => failed.has(tpKey(r.topic, r.partition)));
  }
  // An empty or unparsable node is removed so that the next request can be written.
  if (requested.length === 0) {
    rt.log.warn('/admin/reassign_partitions lists no partition (or could not be parsed): deleting it');
    await rt.zk.deletePartitionReassignment(rt.fence());
    await rt.zk.getPartitionReassignment(rt.watch.reassignment);
  }
  return new Set([...results].filter(([, v]) => v.errorCode === ErrorCode.NONE).map(([k]) => k));
}

/** AlterPartitionReassignments (Kafka's processApiPartitionReassignment); replicas null cancels. */
export async function processApiPartitionReassignment(
  rt: ControllerRuntime,
  reqs: readonly (TopicPartition & { replicas: number[] | null })[],
): Promise<Map<string, ApiResult>> {
  const results = new Map<string, ApiResult>();
  const toStart = new Map<string, { tp: TopicPartition; a: ReplicaAssignment }>();
  for (const r of reqs) {
    const tp = { topic: r.topic, partition: r.partition };
    const key = tpKey(r.topic, r.partition);
    const err = r.replicas ? validateReplicas(rt.ctx, tp, r.replicas) : undefined;
    if (err) {
      results.set(key, err);
      continue;
    }
    const a = maybeBuildReassignment(rt.ctx, tp, r.replicas);
    if (a) toStart.set(key, { tp, a });
    else results.set(key, { errorCode: ControllerErrors.NO_REASSIGNMENT_IN_PROGRESS, message: 'No partition reassignment is in progress.' });
  }
  // The latest reassignment wins over one pending in ZooKeeper.
  await maybeRemoveFromZkReassignment(rt, (r) => toStart.has(tpKey(r.topic, r.partition)));
  for (const [k, v] of await maybeTriggerPartitionReassignment(rt, toStart)) results.set(k, v);
  return results;
}

/** ListPartitionReassignments: the partitions asked for (or all) that are being reassigned. */
export function listPartitionReassignments(ctx: ControllerContext, tps: readonly TopicPartition[] | null): ListedReassignment[] {
  const list =
    tps ??
    [...ctx.pendingReassignments.keys()].sort().map((k) => {
      const i = k.lastIndexOf('-');
      return { topic: k.slice(0, i), partition: Number(k.slice(i + 1)) };
    });
  const out: ListedReassignment[] = [];
  for (const tp of list) {
    const a = fullAssignment(ctx, tp);
    if (isBeingReassigned(a)) out.push({ topic: tp.topic, partition: tp.partition, ...a });
  }
  return out;
}

/** On failover: new ZooKeeper requests first, then reassignments the topic znodes say are in progress. */
export async function initializePartitionReassignments(rt: ControllerRuntime): Promise<void> {
  const fromZk = await processZkPartitionReassignment(rt);
  await maybeResumeReassignments(rt, (tp) => !fromZk.has(tpKey(tp.topic, tp.partition)));
}
