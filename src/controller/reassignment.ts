/**
 * Partition reassignment (Kafka 2.4+'s KafkaController.onPartitionReassignment), started through
 * `/admin/reassign_partitions` (the `--zookeeper` tools) or AlterPartitionReassignments.
 *
 * Names as Kafka's: ORS = the replicas before, TRS = the target replicas, RS = TRS + ORS (target
 * first, no duplicates), AR = RS - ORS (adding), RR = RS - TRS (removing). Phases:
 *   U.  RS, AR and RR are written to the topic znode (`adding_replicas`/`removing_replicas`) and
 *       the context; replicas of an earlier, superseded target that RS no longer holds are stopped.
 *   A.  While some TRS replica is not in the ISR: leaderEpoch + 1 in the state znode, LeaderAndIsr
 *       to ORS (isNew false) and AR (isNew true), AR replicas NewReplica. Then wait: the state
 *       znode is watched (Kafka's PartitionReassignmentIsrChangeHandler), and ISR change
 *       notifications re-check too. New replicas enter the ISR only by replicating (the leader
 *       writes the state znode); the controller never puts them there.
 *   B.  Once TRS ⊆ ISR: AR online; RS = TRS in the context; a leader among TRS is elected if the
 *       current one is not in TRS or is dead (ReassignPartitionLeaderElection), else leaderEpoch + 1
 *       and LeaderAndIsr to TRS; RR replicas go Offline (out of the ISR) then NonExistent
 *       (StopReplica with delete); the topic znode gets RS = TRS and no AR/RR; the partition leaves
 *       `/admin/reassign_partitions`; every broker gets UpdateMetadata.
 * Cancelling (AlterPartitionReassignments with null replicas) is a reassignment back to ORS, which
 * is complete at once and stops the replicas that were being added.
 * A new controller resumes reassignments whose topic znode still lists adding/removing replicas.
 *
 * This file holds those steps and what triggers the next one (an ISR change, a broker's start);
 * the assignment arithmetic is reassignment-state.ts, the requests that start, cancel or list
 * reassignments (and the resumption on failover) reassignment-requests.ts.
 */
import { ControllerMovedError, type LeaderIsrState, type PartitionReassignment, type VersionedState } from '../metadata/zk/zk-client-types.js';
import { tpKey } from '../common/partition-keys.js';
import type { TopicPartition } from './context.js';
import type { ControllerEnv, ControllerRuntime } from './env.js';
import { handlePartitionStateChanges } from './partition-ops.js';
import { handleReplicaStateChanges } from './replica-ops.js';
import { replicaState, setReplicaState } from './replica-state-machine.js';
import { resumeDeletionForTopics } from './topic-deletion.js';
import {
  fullAssignment,
  isBeingReassigned,
  originReplicas,
  sameAssignment,
  sameList,
  setFullAssignment,
  targetReplicas,
  type ReplicaAssignment,
} from './reassignment-state.js';

const MAX_ZK_RETRIES = 5;

// ---- ZooKeeper writes ----------------------------------------------------------------------

/**
 * Writes the topic znode with this partition's assignment (Kafka's updateReplicaAssignmentForPartition).
 * Other partitions are taken from ZooKeeper, so partitions added meanwhile are not lost; the write
 * is conditional and fenced, and retried on a race.
 */
async function updateReplicaAssignmentForPartition(env: ControllerEnv, tp: TopicPartition, a: ReplicaAssignment): Promise<void> {
  const { ctx, zk } = env;
  const t = ctx.topics.get(tp.topic);
  if (!t) return;
  for (let attempt = 0; ; attempt++) {
    const cur = await zk.getTopicAssignment(tp.topic);
    if (!cur) throw new Error(`topic ${tp.topic} has no znode`);
    const partitions = new Map(cur.partitions);
    const adding = new Map(cur.addingReplicas);
    const removing = new Map(cur.removingReplicas);
    partitions.set(tp.partition, [...a.replicas]);
    if (a.adding.length > 0) adding.set(tp.partition, [...a.adding]);
    else adding.delete(tp.partition);
    if (a.removing.length > 0) removing.set(tp.partition, [...a.removing]);
    else removing.delete(tp.partition);
    try {
      t.zkVersion = await zk.setTopicAssignment(
        { topic: tp.topic, topicId: t.topicId || cur.topicId, partitions, addingReplicas: adding, removingReplicas: removing },
        cur.zkVersion,
        env.fence(),
      );
      break;
    } catch (err) {
      if (err instanceof ControllerMovedError || attempt + 1 >= MAX_ZK_RETRIES) throw err;
    }
  }
  setFullAssignment(ctx, tp, a);
}

/** Reads the partition's state from ZooKeeper (arming the ISR watch while it is being reassigned) into the context. */
async function readState(rt: ControllerRuntime, tp: TopicPartition): Promise<VersionedState | undefined> {
  const { ctx, zk } = rt;
  const key = tpKey(tp.topic, tp.partition);
  let s: VersionedState | undefined;
  if (ctx.pendingReassignments.has(key) && !ctx.reassignmentIsrWatches.has(key) && zk.watchPartitionState) {
    ctx.reassignmentIsrWatches.add(key);
    s = await zk.watchPartitionState(tp.topic, tp.partition, rt.watch.partitionState(tp));
  } else {
    s = (await zk.getPartitionStates(tp.topic, [tp.partition])).get(tp.partition);
  }
  if (s) ctx.leadership.set(key, s);
  return s;
}

/** Kafka's isReassignmentComplete: every target replica is in the ISR ZooKeeper holds. */
async function isReassignmentComplete(rt: ControllerRuntime, tp: TopicPartition, a: ReplicaAssignment): Promise<boolean> {
  if (!isBeingReassigned(a)) return true;
  const s = await readState(rt, tp);
  return s !== undefined && targetReplicas(a).every((r) => s.state.isr.includes(r));
}

/**
 * After the move a target replica must lead: the current leader if it is one, or a live target in
 * the ISR. Fjord waits when none is (a target broker that caught up while its registration lapsed,
 * seen by the leader but not yet by the controller); Kafka completes anyway, fails the election
 * and leaves the partition without a leader once the old one is taken out of the ISR. The move
 * resumes when the broker's registration arrives (resumeReassignmentsForBrokers).
 */
function targetCanLead(rt: ControllerRuntime, tp: TopicPartition, a: ReplicaAssignment): boolean {
  const target = targetReplicas(a);
  const leader = rt.ctx.leaderOf(tp);
  if (target.includes(leader) && rt.ctx.isLive(leader)) return true;
  const isr = rt.ctx.leadership.get(tpKey(tp.topic, tp.partition))?.state.isr ?? [];
  return target.some((r) => rt.ctx.isLive(r) && isr.includes(r));
}

/**
 * leaderEpoch + 1 in the state znode (so replicas accept the new replica set), then LeaderAndIsr
 * to ORS (isNew false) and AR (isNew true). Kafka's updateLeaderEpochAndSendRequest.
 */
async function updateLeaderEpochAndSendRequest(rt: ControllerRuntime, tp: TopicPartition, a: ReplicaAssignment): Promise<void> {
  const { ctx, zk } = rt;
  const key = tpKey(tp.topic, tp.partition);
  for (let attempt = 0; attempt < MAX_ZK_RETRIES; attempt++) {
    const cur = (await zk.getPartitionStates(tp.topic, [tp.partition])).get(tp.partition);
    if (!cur) {
      rt.log.error({ partition: key }, 'reassignment: the partition has no state znode; its leader epoch cannot be bumped');
      return;
    }
    if (cur.state.controllerEpoch > ctx.epoch) {
      rt.log.error(
        { partition: key, controllerEpoch: cur.state.controllerEpoch },
        'reassignment: the state was written by a newer controller; aborting the leader epoch bump',
      );
      return;
    }
    const state: LeaderIsrState = { ...cur.state, leaderEpoch: cur.state.leaderEpoch + 1, controllerEpoch: ctx.epoch };
    const r = (await zk.updatePartitionStates(tp.topic, [{ partition: tp.partition, state, expectedZkVersion: cur.zkVersion }], rt.fence())).get(tp.partition);
    if (typeof r !== 'number') continue;
    rt.stateChange.leaderAndIsr(tp.topic, tp.partition, cur.state, state, 'reassignment');
    ctx.leadership.set(key, { state, zkVersion: r });
    rt.batch.addLeaderAndIsrRequestForBrokers(originReplicas(a), tp, false);
    rt.batch.addLeaderAndIsrRequestForBrokers(a.adding, tp, true);
    rt.sendBatch();
    return;
  }
  rt.log.error({ partition: key }, 'reassignment: gave up bumping the leader epoch after repeated state znode races');
}

/** Kafka's stopRemovedReplicasOfReassignedPartition: Offline (out of the ISR), then deleted and forgotten. */
async function stopRemovedReplicas(rt: ControllerRuntime, tp: TopicPartition, removed: readonly number[]): Promise<void> {
  if (removed.length === 0) return;
  const rs = removed.map((replica) => ({ ...tp, replica }));
  // A replica never started (its broker was down) is Offline already or unknown; bring unknown ones into the table first.
  for (const r of rs) if (replicaState(rt.ctx, r) === 'NonExistentReplica') setReplicaState(rt.ctx, r, 'OfflineReplica');
  await handleReplicaStateChanges(rt, rs, 'OfflineReplica');
  await handleReplicaStateChanges(rt, rs, 'ReplicaDeletionStarted');
  await handleReplicaStateChanges(rt, rs, 'ReplicaDeletionSuccessful');
  await handleReplicaStateChanges(rt, rs, 'NonExistentReplica');
}

/** Kafka's updateCurrentReassignment (phase U). */
async function updateCurrentReassignment(rt: ControllerRuntime, tp: TopicPartition, a: ReplicaAssignment): Promise<void> {
  const current = fullAssignment(rt.ctx, tp);
  if (!sameAssignment(current, a)) {
    rt.log.info({ partition: tpKey(tp.topic, tp.partition), from: current, to: a }, 'reassignment: updating the partition assignment');
    await updateReplicaAssignmentForPartition(rt, tp, a);
    const unneeded = current.replicas.filter((r) => !a.replicas.includes(r));
    await stopRemovedReplicas(rt, tp, unneeded);
  }
  rt.ctx.pendingReassignments.set(tpKey(tp.topic, tp.partition), targetReplicas(a));
}

/** Kafka's moveReassignedPartitionLeaderIfRequired (B3), with `a` the completed assignment (RS = TRS). */
async function moveReassignedPartitionLeaderIfRequired(rt: ControllerRuntime, tp: TopicPartition, a: ReplicaAssignment): Promise<void> {
  const leader = rt.ctx.leaderOf(tp);
  if (!a.replicas.includes(leader) || !rt.ctx.isLive(leader)) {
    rt.log.info({ partition: tpKey(tp.topic, tp.partition), leader, replicas: a.replicas }, 'reassignment: electing a leader among the target replicas');
    await handlePartitionStateChanges(rt, [tp], 'OnlinePartition', { kind: 'reassign' });
  } else {
    await updateLeaderEpochAndSendRequest(rt, tp, a);
  }
}

/** Kafka's maybeRemoveFromZkReassignment: drops matching partitions from `/admin/reassign_partitions`. */
export async function maybeRemoveFromZkReassignment(rt: ControllerRuntime, shouldRemove: (r: PartitionReassignment) => boolean): Promise<void> {
  const { zk } = rt;
  const pending = await zk.getPartitionReassignment();
  if (!pending) return;
  const keep = pending.filter((r) => !shouldRemove(r));
  if (keep.length === pending.length) return;
  if (keep.length === 0) {
    rt.log.info('no more partitions to reassign: deleting /admin/reassign_partitions');
    await zk.deletePartitionReassignment(rt.fence());
    // The watch was on the node just deleted: re-arm it so the next one is seen.
    await zk.getPartitionReassignment(rt.watch.reassignment);
  } else if (zk.setPartitionReassignment) {
    await zk.setPartitionReassignment(keep, rt.fence());
  }
}

async function removePartitionFromReassigningPartitions(rt: ControllerRuntime, tp: TopicPartition, a: ReplicaAssignment): Promise<void> {
  await maybeRemoveFromZkReassignment(rt, (r) => r.topic === tp.topic && r.partition === tp.partition && sameList(r.replicas, a.replicas));
  rt.ctx.pendingReassignments.delete(tpKey(tp.topic, tp.partition));
}

/** Kafka's onPartitionReassignment: one step of a partition's reassignment; called again when the ISR changes. */
export async function onPartitionReassignment(rt: ControllerRuntime, tp: TopicPartition, a: ReplicaAssignment): Promise<void> {
  const { ctx } = rt;
  const key = tpKey(tp.topic, tp.partition);
  // While a reassignment runs, its topic cannot be deleted.
  if (ctx.isTopicQueuedForDeletion(tp.topic)) ctx.topicsIneligibleForDeletion.add(tp.topic);
  await updateCurrentReassignment(rt, tp, a);
  if (!(await isReassignmentComplete(rt, tp, a)) || !targetCanLead(rt, tp, a)) {
    rt.log.info(
      { partition: key, replicas: a.replicas, adding: a.adding, removing: a.removing },
      'reassignment: waiting for the target replicas to join the ISR (and one of them to be live)',
    );
    await updateLeaderEpochAndSendRequest(rt, tp, a);
    await handleReplicaStateChanges(
      rt,
      a.adding.filter((r) => replicaState(ctx, { ...tp, replica: r }) === 'NonExistentReplica').map((replica) => ({ ...tp, replica })),
      'NewReplica',
    );
    rt.sendBatch();
    return;
  }
  await handleReplicaStateChanges(
    rt,
    a.adding.filter((r) => ctx.liveBrokers.has(r)).map((replica) => ({ ...tp, replica })),
    'OnlineReplica',
  );
  const completed: ReplicaAssignment = { replicas: targetReplicas(a), adding: [], removing: [] };
  setFullAssignment(ctx, tp, completed);
  await moveReassignedPartitionLeaderIfRequired(rt, tp, completed);
  await stopRemovedReplicas(rt, tp, a.removing);
  await updateReplicaAssignmentForPartition(rt, tp, completed);
  await removePartitionFromReassigningPartitions(rt, tp, completed);
  rt.batch.addUpdateMetadataRequestForBrokers(ctx.liveOrShuttingDownBrokerIds(), [tp]);
  rt.sendBatch();
  rt.log.info({ partition: key, replicas: completed.replicas, leader: ctx.leaderOf(tp) }, 'reassignment completed');
  if (ctx.isTopicQueuedForDeletion(tp.topic)) await resumeDeletionForTopics(rt, [tp.topic]);
}

/** Kafka's maybeCompleteReassignment: the ISR may now hold every target replica. */
export async function maybeCompleteReassignment(rt: ControllerRuntime, tp: TopicPartition): Promise<void> {
  const a = fullAssignment(rt.ctx, tp);
  if (!rt.ctx.pendingReassignments.has(tpKey(tp.topic, tp.partition)) || !isBeingReassigned(a)) return;
  // Only a step that can complete: another round would bump the leader epoch, whose state write
  // fires this partition's watch again.
  if ((await isReassignmentComplete(rt, tp, a)) && targetCanLead(rt, tp, a)) {
    rt.log.info({ partition: tpKey(tp.topic, tp.partition), target: targetReplicas(a) }, 'reassignment: the target replicas have caught up');
    await onPartitionReassignment(rt, tp, a);
  }
}

/** The state znode of a partition being reassigned changed (the watch is one-shot: re-armed by the check). */
export async function processPartitionReassignmentIsrChange(rt: ControllerRuntime, tp: TopicPartition): Promise<void> {
  rt.ctx.reassignmentIsrWatches.delete(tpKey(tp.topic, tp.partition));
  await maybeCompleteReassignment(rt, tp);
}

/** ISR change notifications named these partitions: those being reassigned may be complete. */
export async function maybeCompleteReassignments(rt: ControllerRuntime, tps: readonly TopicPartition[]): Promise<void> {
  for (const tp of tps) if (rt.ctx.pendingReassignments.has(tpKey(tp.topic, tp.partition))) await maybeCompleteReassignment(rt, tp);
}

/** Reassignments in progress whose partitions pass `shouldResume` take their next step (Kafka's maybeResumeReassignments). */
export async function maybeResumeReassignments(rt: ControllerRuntime, shouldResume: (tp: TopicPartition, a: ReplicaAssignment) => boolean): Promise<void> {
  for (const key of [...rt.ctx.pendingReassignments.keys()]) {
    const i = key.lastIndexOf('-');
    const tp = { topic: key.slice(0, i), partition: Number(key.slice(i + 1)) };
    const a = fullAssignment(rt.ctx, tp);
    if (!isBeingReassigned(a)) {
      rt.ctx.pendingReassignments.delete(key);
      continue;
    }
    if (shouldResume(tp, a)) await onPartitionReassignment(rt, tp, a);
  }
}

/** The partitions of a broker that just started whose reassignment targets it (their replicas can now start). */
export async function resumeReassignmentsForBrokers(rt: ControllerRuntime, brokerIds: readonly number[]): Promise<void> {
  const set = new Set(brokerIds);
  await maybeResumeReassignments(rt, (_tp, a) => targetReplicas(a).some((r) => set.has(r)));
}
