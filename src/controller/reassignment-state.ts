/**
 * What the controller knows of a partition's reassignment: Kafka's ReplicaAssignment (RS with
 * AR and RR; ORS and TRS derived from it), its copy in the controller context, and the checks an
 * API reassignment must pass. No ZooKeeper and no requests here: the steps that act on it are in
 * reassignment.ts, the ways one is started, cancelled or listed in reassignment-requests.ts.
 */
import { ErrorCode } from '../protocol/errors.js';
import { tpKey } from '../common/partition-keys.js';
import type { ControllerContext, TopicPartition } from './context.js';

/** Kafka's ReplicaAssignment: the full replica list with what is being added and removed. */
export interface ReplicaAssignment {
  replicas: number[];
  adding: number[];
  removing: number[];
}

export interface ApiResult {
  errorCode: number;
  /** null for success, as Kafka's ApiError.NONE. */
  message: string | null;
}

export interface ListedReassignment extends TopicPartition, ReplicaAssignment {}

export const originReplicas = (a: ReplicaAssignment): number[] => a.replicas.filter((r) => !a.adding.includes(r));
export const targetReplicas = (a: ReplicaAssignment): number[] => a.replicas.filter((r) => !a.removing.includes(r));
export const isBeingReassigned = (a: ReplicaAssignment): boolean => a.adding.length > 0 || a.removing.length > 0;

/** Kafka's ReplicaAssignment.reassignTo: a new target keeps the original replicas (ORS) as the base. */
export function reassignTo(current: ReplicaAssignment, target: readonly number[]): ReplicaAssignment {
  const origin = originReplicas(current);
  const replicas = [...new Set([...target, ...origin])];
  return { replicas, adding: replicas.filter((r) => !origin.includes(r)), removing: replicas.filter((r) => !target.includes(r)) };
}

export function sameList(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
export function sameAssignment(a: ReplicaAssignment, b: ReplicaAssignment): boolean {
  return sameList(a.replicas, b.replicas) && sameList(a.adding, b.adding) && sameList(a.removing, b.removing);
}

export function fullAssignment(ctx: ControllerContext, tp: TopicPartition): ReplicaAssignment {
  const t = ctx.topics.get(tp.topic);
  return {
    replicas: [...(t?.assignment.get(tp.partition) ?? [])],
    adding: [...(t?.addingReplicas.get(tp.partition) ?? [])],
    removing: [...(t?.removingReplicas.get(tp.partition) ?? [])],
  };
}

export function setFullAssignment(ctx: ControllerContext, tp: TopicPartition, a: ReplicaAssignment): void {
  const t = ctx.topics.get(tp.topic);
  if (!t) return;
  t.assignment.set(tp.partition, [...a.replicas]);
  if (a.adding.length > 0) t.addingReplicas.set(tp.partition, [...a.adding]);
  else t.addingReplicas.delete(tp.partition);
  if (a.removing.length > 0) t.removingReplicas.set(tp.partition, [...a.removing]);
  else t.removingReplicas.delete(tp.partition);
  const key = tpKey(tp.topic, tp.partition);
  if (isBeingReassigned(a)) ctx.pendingReassignments.set(key, targetReplicas(a));
}

/** Kafka's validateReplicas for an API reassignment (the ZooKeeper path is not validated, as in Kafka). */
export function validateReplicas(ctx: ControllerContext, tp: TopicPartition, replicas: readonly number[]): ApiResult | undefined {
  const invalid = (message: string): ApiResult => ({ errorCode: ErrorCode.INVALID_REPLICA_ASSIGNMENT, message });
  if (replicas.length === 0) return invalid('Empty replica list specified in partition reassignment.');
  if (new Set(replicas).size !== replicas.length) return invalid(`Duplicate replica ids in partition reassignment replica list: ${listString(replicas)}`);
  if (replicas.some((r) => r < 0)) return invalid(`Invalid broker id in replica list: ${listString(replicas)}`);
  const adding = reassignTo(fullAssignment(ctx, tp), replicas).adding;
  if (!adding.every((r) => ctx.liveBrokers.has(r))) {
    const live = [...ctx.liveBrokers.keys()].sort((a, b) => a - b);
    return invalid(`Replica assignment has brokers that are not alive. Replica list: ${listString(adding)}, live broker list: ${listString(live)}`);
  }
  return undefined;
}

/** Scala's Seq.toString, as Kafka's messages print lists. */
const listString = (xs: readonly number[]): string => `List(${xs.join(', ')})`;
