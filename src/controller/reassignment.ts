/**
 * Partition reassignment through `/admin/reassign_partitions` (the znode the `--zookeeper`
 * reassignment tool writes). Kafka runs it in phases: add the target replicas (RS = ORS + TRS,
 * adding/removing recorded in the topic znode), wait until every target replica is in the ISR,
 * elect a leader among the targets, then drop the old replicas. Fjord has no replication yet
 * (issue 12), so a new replica can never catch up: the reassignment completes as soon as the new
 * replicas are told. They are written into the ISR then (a stand-in for catching up, to be
 * replaced by waiting for the ISR), the leader moves to the first live target in the new ISR if
 * the old one leaves, removed replicas get StopReplica(delete), the topic znode is rewritten
 * (fenced), and the znode is deleted.
 */
import type { LeaderIsrState } from '../metadata/zk/zk-client-types.js';
import { tpKey, type TopicPartition } from './context.js';
import { groupByTopic, type ControllerRuntime } from './env.js';
import { handlePartitionStateChanges } from './partition-ops.js';
import { handleReplicaStateChanges } from './replica-ops.js';

export async function processPartitionReassignment(rt: ControllerRuntime): Promise<void> {
  const { ctx, zk } = rt;
  const requested = await zk.getPartitionReassignment(rt.watch.reassignment);
  if (!requested) return;
  const valid: (TopicPartition & { target: number[] })[] = [];
  for (const r of requested) {
    const current = ctx.replicasFor(r);
    if (current.length === 0 || ctx.isTopicQueuedForDeletion(r.topic) || r.replicas.length === 0 || new Set(r.replicas).size !== r.replicas.length) {
      rt.log.warn({ partition: tpKey(r.topic, r.partition), replicas: r.replicas }, 'reassignment skipped: unknown partition, topic being deleted or invalid replica list');
      continue;
    }
    if (current.join(',') === r.replicas.join(',')) continue;
    valid.push({ topic: r.topic, partition: r.partition, target: r.replicas });
  }
  for (const [topic, list] of groupByTopic(valid)) await reassignTopic(rt, topic, list);
  await zk.deletePartitionReassignment(rt.fence());
}

async function reassignTopic(rt: ControllerRuntime, topic: string, list: (TopicPartition & { target: number[] })[]): Promise<void> {
  const { ctx, zk } = rt;
  const t = ctx.topics.get(topic)!;
  const removed: { tp: TopicPartition; replicas: number[] }[] = [];
  const isrUpdates: { partition: number; state: LeaderIsrState; expectedZkVersion: number }[] = [];
  for (const r of list) {
    const key = tpKey(topic, r.partition);
    const old = t.assignment.get(r.partition) ?? [];
    ctx.pendingReassignments.set(key, r.target);
    removed.push({ tp: r, replicas: old.filter((b) => !r.target.includes(b)) });
    t.assignment.set(r.partition, r.target);
    const l = ctx.leadership.get(key);
    if (!l) continue;
    const added = r.target.filter((b) => !old.includes(b) && ctx.liveBrokers.has(b));
    const isr = [...l.state.isr.filter((b) => r.target.includes(b)), ...added.filter((b) => !l.state.isr.includes(b))];
    const leader = r.target.includes(l.state.leader) && ctx.isLive(l.state.leader) ? l.state.leader : -1;
    isrUpdates.push({ partition: r.partition, state: { leader, leaderEpoch: l.state.leaderEpoch + 1, isr, controllerEpoch: ctx.epoch }, expectedZkVersion: l.zkVersion });
  }
  const written = isrUpdates.length > 0 ? await zk.updatePartitionStates(topic, isrUpdates, rt.fence()) : new Map<number, number | 'BAD_VERSION'>();
  for (const u of isrUpdates) {
    const v = written.get(u.partition);
    if (typeof v === 'number') ctx.leadership.set(tpKey(topic, u.partition), { state: u.state, zkVersion: v });
  }
  // New replicas come online (they are told the partition); leaderless ones elect among the targets.
  const newReplicas = list.flatMap((r) => r.target.filter((b) => ctx.liveBrokers.has(b)).map((replica) => ({ topic, partition: r.partition, replica })));
  await handleReplicaStateChanges(rt, newReplicas.filter((r) => rt.ctx.replicaStates.get(`${tpKey(topic, r.partition)}@${r.replica}`) === undefined), 'NewReplica');
  await handleReplicaStateChanges(rt, newReplicas, 'OnlineReplica');
  const leaderless = list.filter((r) => ctx.leaderOf(r) === -1);
  await handlePartitionStateChanges(rt, leaderless, 'OnlinePartition', { kind: 'reassign' });
  for (const r of list) {
    if (ctx.leaderOf(r) !== -1) rt.batch.addLeaderAndIsrRequestForBrokers(ctx.replicasFor(r), r, false);
  }
  // Removed replicas stop and delete their logs; they are forgotten.
  const gone = removed.flatMap((x) => x.replicas.map((replica) => ({ ...x.tp, replica })));
  for (const g of gone) rt.batch.addStopReplicaRequestForBrokers([g.replica], g, true);
  for (const g of gone) ctx.replicaStates.delete(`${tpKey(g.topic, g.partition)}@${g.replica}`);
  t.zkVersion = await zk.setTopicAssignment(
    { topic, topicId: t.topicId, partitions: t.assignment, addingReplicas: new Map(), removingReplicas: new Map() },
    t.zkVersion,
    rt.fence(),
  );
  for (const r of list) ctx.pendingReassignments.delete(tpKey(topic, r.partition));
  rt.log.info({ topic, partitions: list.map((r) => r.partition) }, 'reassignment completed (no replication yet: new replicas are not waited for)');
}
