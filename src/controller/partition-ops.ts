/**
 * The actions behind partition state moves (the doing half of Kafka's PartitionStateMachine):
 * a new partition gets its first leader and ISR written, an online or offline one gets a leader
 * elected by one of the strategies in election.ts. Every state znode write is conditional on the
 * znode version and fenced by the controller epoch; a lost race (BAD_VERSION) re-reads the state
 * from ZooKeeper and tries again. Successful moves add LeaderAndIsr (and so UpdateMetadata) to
 * the event's batch.
 */
import { ErrorCode } from '../protocol/errors.js';
import type { LeaderIsrState } from '../metadata/zk/zk-client-types.js';
import { groupByTopic, tpKey } from '../common/partition-keys.js';
import type { TopicPartition } from './context.js';
import {
  controlledShutdownPartitionLeaderElection,
  offlinePartitionLeaderElection,
  preferredReplicaPartitionLeaderElection,
  reassignPartitionLeaderElection,
  type ElectionResult,
} from './election.js';
import { ControllerErrors, type ControllerEnv } from './env.js';
import type { StateChangeCause } from '../common/state-change-log.js';
import { legalForPartitionMove, partitionState, setPartitionState, type PartitionState } from './partition-state-machine.js';

export type ElectionStrategy = { kind: 'offline'; allowUnclean?: boolean } | { kind: 'reassign' } | { kind: 'preferred' } | { kind: 'controlledShutdown' };

/** Per partition: ErrorCode.NONE, or why no leader was elected. */
export type ElectionOutcome = Map<string, number>;

const MAX_ZK_RETRIES = 5;

/** Moves partitions to `target`, electing with `strategy` where a leader is needed. */
export async function handlePartitionStateChanges(
  env: ControllerEnv,
  tps: readonly TopicPartition[],
  target: PartitionState,
  strategy: ElectionStrategy = { kind: 'offline' },
): Promise<ElectionOutcome> {
  const outcome: ElectionOutcome = new Map();
  const legal = legalForPartitionMove(env.ctx, tps, target, env.log);
  if (target !== 'OnlinePartition') {
    for (const tp of legal) movePartition(env, tp, target);
    return outcome;
  }
  const fresh = legal.filter((tp) => partitionState(env.ctx, tp) === 'NewPartition');
  const existing = legal.filter((tp) => partitionState(env.ctx, tp) !== 'NewPartition');
  await initializeLeaderAndIsr(env, fresh, outcome);
  await electLeaders(env, existing, strategy, outcome);
  return outcome;
}

/** A new partition: leader = first live replica, ISR = the live replicas (Kafka's initializeLeaderAndIsrForPartitions). */
async function initializeLeaderAndIsr(env: ControllerEnv, tps: readonly TopicPartition[], outcome: ElectionOutcome): Promise<void> {
  const { ctx, zk, log } = env;
  for (const [topic, list] of groupByTopic(tps)) {
    const states = new Map<number, LeaderIsrState>();
    for (const tp of list) {
      const live = ctx.replicasFor(tp).filter((r) => ctx.isLive(r));
      if (live.length === 0) {
        log.error({ partition: tpKey(topic, tp.partition), replicas: ctx.replicasFor(tp) }, 'new partition has no live replica; it stays without a leader');
        outcome.set(tpKey(topic, tp.partition), ErrorCode.LEADER_NOT_AVAILABLE);
        continue;
      }
      states.set(tp.partition, { leader: live[0]!, leaderEpoch: 0, isr: live, controllerEpoch: ctx.epoch });
    }
    if (states.size === 0) continue;
    const created = await zk.createPartitionStates(topic, states, env.fence());
    let read = new Map<number, { state: LeaderIsrState; zkVersion: number }>();
    if ([...created.values()].includes('exists'))
      read = await zk.getPartitionStates(
        topic,
        [...created].filter(([, r]) => r === 'exists').map(([p]) => p),
      );
    for (const [partition, result] of created) {
      const tp = { topic, partition };
      const l = result === 'ok' ? { state: states.get(partition)!, zkVersion: 0 } : read.get(partition);
      if (!l) continue;
      ctx.leadership.set(tpKey(topic, partition), l);
      env.stateChange.leaderAndIsr(topic, partition, undefined, l.state, 'new partition');
      movePartition(env, tp, ctx.isLive(l.state.leader) ? 'OnlinePartition' : 'OfflinePartition', 'new partition');
      env.batch.addLeaderAndIsrRequestForBrokers(ctx.replicasFor(tp), tp, true);
      outcome.set(tpKey(topic, partition), ErrorCode.NONE);
    }
  }
}

async function elect(env: ControllerEnv, tp: TopicPartition, current: LeaderIsrState, strategy: ElectionStrategy): Promise<ElectionResult | undefined> {
  const { ctx } = env;
  const replicas = ctx.replicasFor(tp);
  const isLive = (b: number): boolean => ctx.isLive(b);
  switch (strategy.kind) {
    case 'offline': {
      const unclean = strategy.allowUnclean === true || (await env.uncleanLeaderElectionEnabled(tp.topic));
      const r = offlinePartitionLeaderElection(replicas, current.isr, isLive, unclean);
      if (r?.unclean && env.stats) env.stats.uncleanLeaderElections++;
      if (r?.unclean)
        env.log.warn(
          { partition: tpKey(tp.topic, tp.partition), leader: r.leader },
          'unclean leader election: records not replicated to the new leader may be lost',
        );
      return r;
    }
    case 'reassign':
      return reassignPartitionLeaderElection(ctx.pendingReassignments.get(tpKey(tp.topic, tp.partition)) ?? replicas, current.isr, isLive);
    case 'preferred':
      return preferredReplicaPartitionLeaderElection(replicas, current.isr, isLive);
    case 'controlledShutdown':
      return controlledShutdownPartitionLeaderElection(replicas, current.isr, (b) => ctx.liveBrokers.has(b), ctx.shuttingDownBrokerIds);
  }
}

/** Elects leaders for partitions that already have a state znode (Kafka's electLeaderForPartitions). */
async function electLeaders(env: ControllerEnv, tps: readonly TopicPartition[], strategy: ElectionStrategy, outcome: ElectionOutcome): Promise<void> {
  const { ctx, zk } = env;
  let remaining = [...tps];
  // Elect from what ZooKeeper holds now, as Kafka's doElectLeaderForPartitions does: a leader may
  // have changed the ISR since the controller last read it.
  await refreshLeadership(
    env,
    remaining.filter((tp) => ctx.leadership.has(tpKey(tp.topic, tp.partition))),
  );
  for (let attempt = 0; remaining.length > 0; attempt++) {
    const retry: TopicPartition[] = [];
    for (const [topic, list] of groupByTopic(remaining)) {
      const updates: { partition: number; state: LeaderIsrState; expectedZkVersion: number; unclean: boolean }[] = [];
      for (const tp of list) {
        const key = tpKey(topic, tp.partition);
        const cur = ctx.leadership.get(key);
        if (!cur) {
          outcome.set(key, ErrorCode.LEADER_NOT_AVAILABLE);
          continue;
        }
        const r = await elect(env, tp, cur.state, strategy);
        if (!r) {
          outcome.set(key, strategy.kind === 'preferred' ? ControllerErrors.PREFERRED_LEADER_NOT_AVAILABLE : ControllerErrors.ELIGIBLE_LEADERS_NOT_AVAILABLE);
          if (strategy.kind === 'offline') movePartition(env, tp, 'OfflinePartition', 'no eligible leader');
          continue;
        }
        updates.push({
          partition: tp.partition,
          state: { leader: r.leader, leaderEpoch: cur.state.leaderEpoch + 1, isr: r.isr, controllerEpoch: ctx.epoch },
          expectedZkVersion: cur.zkVersion,
          unclean: 'unclean' in r && r.unclean === true,
        });
      }
      if (updates.length === 0) continue;
      const results = await zk.updatePartitionStates(topic, updates, env.fence());
      for (const u of updates) {
        const tp = { topic, partition: u.partition };
        const key = tpKey(topic, u.partition);
        const r = results.get(u.partition);
        if (typeof r === 'number') {
          const cause = u.unclean ? 'unclean election' : env.cause;
          env.stateChange.leaderAndIsr(topic, u.partition, ctx.leadership.get(key)?.state, u.state, cause);
          ctx.leadership.set(key, { state: u.state, zkVersion: r });
          movePartition(env, tp, 'OnlinePartition', cause);
          const recipients = ctx.replicasFor(tp).filter((b) => strategy.kind !== 'controlledShutdown' || !ctx.shuttingDownBrokerIds.has(b));
          env.batch.addLeaderAndIsrRequestForBrokers(recipients, tp, false);
          outcome.set(key, ErrorCode.NONE);
        } else {
          retry.push(tp);
        }
      }
    }
    if (retry.length === 0) break;
    if (attempt + 1 >= MAX_ZK_RETRIES) {
      for (const tp of retry) outcome.set(tpKey(tp.topic, tp.partition), ErrorCode.UNKNOWN_SERVER_ERROR);
      env.log.error({ partitions: retry.map((tp) => tpKey(tp.topic, tp.partition)) }, 'gave up electing after repeated state znode races');
      break;
    }
    await refreshLeadership(env, retry);
    remaining = retry;
  }
}

/** Sets a partition's state, writing the move to the state-change log. */
function movePartition(env: ControllerEnv, tp: TopicPartition, target: PartitionState, cause: StateChangeCause = env.cause): void {
  const from = partitionState(env.ctx, tp);
  setPartitionState(env.ctx, tp, target);
  env.stateChange.partitionState(tp.topic, tp.partition, from, target, cause, env.ctx.leadership.get(tpKey(tp.topic, tp.partition))?.state);
}

/** Re-reads state znodes after a lost conditional write (someone else, e.g. a leader, changed the ISR). */
export async function refreshLeadership(env: ControllerEnv, tps: readonly TopicPartition[]): Promise<void> {
  for (const [topic, list] of groupByTopic(tps)) {
    const states = await env.zk.getPartitionStates(
      topic,
      list.map((tp) => tp.partition),
    );
    for (const [p, s] of states) env.ctx.leadership.set(tpKey(topic, p), s);
  }
}

/** Offline and new partitions get leaders (Kafka's triggerOnlinePartitionStateChange), except topics being deleted. */
export async function triggerOnlinePartitionStateChange(env: ControllerEnv, tps?: readonly TopicPartition[]): Promise<ElectionOutcome> {
  const { ctx } = env;
  const candidates = (tps ?? ctx.allPartitions()).filter((tp) => {
    const s = partitionState(ctx, tp);
    return (s === 'OfflinePartition' || s === 'NewPartition') && !ctx.isTopicQueuedForDeletion(tp.topic);
  });
  return handlePartitionStateChanges(env, candidates, 'OnlinePartition', { kind: 'offline' });
}
