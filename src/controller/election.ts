/**
 * Leader elections as pure functions (Kafka's Election / PartitionLeaderElectionAlgorithms): given
 * a partition's replicas, ISR and which brokers are live, who leads next and what the ISR becomes.
 * `undefined` means no eligible leader. The callers bump leaderEpoch and write the result.
 */

export interface ElectionResult {
  leader: number;
  isr: number[];
}

/**
 * A partition whose leader is gone: the first replica (in assignment order, so the preferred one
 * wins when it can) that is live and in the ISR. Only when `uncleanEnabled`, and no ISR member is
 * live, the first live replica outside it, which becomes the whole ISR (records may be lost).
 */
export function offlinePartitionLeaderElection(
  assignment: readonly number[],
  isr: readonly number[],
  isLive: (b: number) => boolean,
  uncleanEnabled: boolean,
): (ElectionResult & { unclean: boolean }) | undefined {
  const clean = assignment.find((r) => isLive(r) && isr.includes(r));
  if (clean !== undefined) return { leader: clean, isr: isr.filter(isLive), unclean: false };
  if (!uncleanEnabled) return undefined;
  const any = assignment.find(isLive);
  return any === undefined ? undefined : { leader: any, isr: [any], unclean: true };
}

/** A reassignment moving the leader: the first live ISR member among the target replicas. */
export function reassignPartitionLeaderElection(target: readonly number[], isr: readonly number[], isLive: (b: number) => boolean): ElectionResult | undefined {
  const leader = target.find((r) => isLive(r) && isr.includes(r));
  return leader === undefined ? undefined : { leader, isr: [...isr] };
}

/** Back to the preferred (first) replica, only when it is live and in sync. */
export function preferredReplicaPartitionLeaderElection(
  assignment: readonly number[],
  isr: readonly number[],
  isLive: (b: number) => boolean,
): ElectionResult | undefined {
  const preferred = assignment[0];
  if (preferred === undefined || !isLive(preferred) || !isr.includes(preferred)) return undefined;
  return { leader: preferred, isr: [...isr] };
}

/**
 * Moving leadership off brokers that are shutting down: the first replica that is live, in sync
 * and not shutting down; the shutting-down brokers leave the ISR.
 */
export function controlledShutdownPartitionLeaderElection(
  assignment: readonly number[],
  isr: readonly number[],
  isLive: (b: number) => boolean,
  shuttingDown: ReadonlySet<number>,
): ElectionResult | undefined {
  const leader = assignment.find((r) => isLive(r) && isr.includes(r) && !shuttingDown.has(r));
  return leader === undefined ? undefined : { leader, isr: isr.filter((r) => !shuttingDown.has(r)) };
}

/**
 * Kafka's auto leader rebalance test: per preferred broker, the share of the partitions it should
 * lead that someone else leads. Returns, for each broker over `thresholdPercent`, those partitions.
 */
export function imbalancedPartitions<P>(
  partitions: readonly { tp: P; assignment: readonly number[]; leader: number }[],
  thresholdPercent: number,
): Map<number, P[]> {
  const byPreferred = new Map<number, { total: number; notLed: P[] }>();
  for (const p of partitions) {
    const preferred = p.assignment[0];
    if (preferred === undefined) continue;
    const e = byPreferred.get(preferred) ?? { total: 0, notLed: [] };
    e.total++;
    if (p.leader !== preferred) e.notLed.push(p.tp);
    byPreferred.set(preferred, e);
  }
  const out = new Map<number, P[]>();
  for (const [broker, e] of byPreferred) {
    if (e.total > 0 && (e.notLed.length * 100) / e.total > thresholdPercent) out.set(broker, e.notLed);
  }
  return out;
}
