/**
 * What /health/live and /health/ready answer. Live: the process serves HTTP. Ready, for
 * orchestrators: log recovery is over (the log manager and the replica manager have opened every
 * log), start-up has bound the Kafka listeners, and in cluster mode
 * - the broker's ZooKeeper registration exists (its id is among /brokers/ids and it knows its
 *   broker epoch: after a session expiry, until it has registered again, it is not ready);
 * - the controller has spoken since this registration: an UpdateMetadata addressed to this
 *   broker epoch was applied (ControlRequests records it);
 * - the hosted partitions are in sync with the controller's view: every partition the metadata
 *   image lists with this broker among its replicas is hosted, at the image's leader epoch or
 *   later (its LeaderAndIsr was applied).
 * Readiness is computed on each request (O(partitions in the image): well under a millisecond at
 * 10,000), so it drops again while the broker re-registers after a ZooKeeper session expiry.
 * Each check not met is named in the 503's JSON body.
 */

/** Cluster mode's signals, read at each /health/ready (broker.ts adapts the real objects). */
export interface ClusterSignals {
  /** Whether this broker's registration is among /brokers/ids. */
  registered(): boolean;
  /** This registration's broker epoch (-1 until known). */
  brokerEpoch(): bigint;
  /** The broker epoch of the last UpdateMetadata applied (-1 before the first). */
  updateMetadataBrokerEpoch(): bigint;
  /** Partitions the controller's view assigns to this broker that it does not host at that leader epoch yet. */
  partitionsOutOfSync(): number;
}

export interface Readiness {
  ready: boolean;
  /** The checks not met, in the order start-up meets them. */
  missing: string[];
}

export class BrokerHealth {
  /** The log manager and the replica manager have opened (and recovered) every log. */
  logsRecovered = false;
  private cluster: ClusterSignals | undefined;
  private startedValue = false;
  /** The broker started and has begun to stop (Kafka's SHUTTING_DOWN broker state). */
  stopping = false;

  /** Broker.start() has returned: the Kafka listeners are bound (and, in cluster mode, registered); false again once it stops. */
  get started(): boolean {
    return this.startedValue;
  }
  set started(value: boolean) {
    if (this.startedValue && !value) this.stopping = true;
    this.startedValue = value;
  }

  /** Cluster mode: readiness also needs the registration and the controller's view applied. */
  followCluster(signals: ClusterSignals): void {
    this.cluster = signals;
  }

  readiness(): Readiness {
    return readinessOf(this.logsRecovered, this.started, this.cluster);
  }
}

/** The readiness predicate itself (pure over its inputs; unit-tested with fakes). */
export function readinessOf(logsRecovered: boolean, started: boolean, cluster: ClusterSignals | undefined): Readiness {
  const missing: string[] = [];
  if (!logsRecovered) missing.push('log recovery');
  if (!started) missing.push('start-up');
  if (cluster) {
    const epoch = cluster.brokerEpoch();
    if (!cluster.registered() || epoch <= 0n) missing.push('zookeeper registration');
    else if (cluster.updateMetadataBrokerEpoch() !== epoch) missing.push('controller metadata');
    else {
      const behind = cluster.partitionsOutOfSync();
      if (behind > 0) missing.push(`partitions in sync (${behind} not yet)`);
    }
  }
  return { ready: missing.length === 0, missing };
}

/** A partition of the controller's view, as the metadata image keeps it. */
export interface ViewPartition {
  partition: number;
  leaderEpoch: number;
  replicas: readonly number[];
}

/** Counts the partitions of `view` with `brokerId` among their replicas that are not hosted at their leader epoch. */
export function countOutOfSync(
  brokerId: number,
  view: Iterable<{ name: string; partitions: readonly ViewPartition[] }>,
  hostedEpoch: (topic: string, partition: number) => number | undefined,
): number {
  let behind = 0;
  for (const topic of view) {
    for (const p of topic.partitions) {
      if (!p.replicas.includes(brokerId)) continue;
      const hosted = hostedEpoch(topic.name, p.partition);
      if (hosted === undefined || hosted < p.leaderEpoch) behind++;
    }
  }
  return behind;
}

/** Cluster mode's signals from the broker's ZooKeeper link, metadata image, hosted partitions and control requests. */
export function clusterSignals(
  brokerId: number,
  zk: { readonly brokerEpoch: bigint; readonly membership: { readonly brokerIds: readonly number[] } },
  image: { topics(): Iterable<{ name: string; partitions: readonly ViewPartition[] }> },
  /** The leader epoch a partition is hosted here at (the ReplicaManager's Partition, or with shard workers their role ledger); undefined when not hosted. */
  hostedEpoch: (topic: string, partition: number) => number | undefined,
  control: { readonly updateMetadataBrokerEpoch: bigint },
): ClusterSignals {
  return {
    registered: () => zk.membership.brokerIds.includes(brokerId),
    brokerEpoch: () => zk.brokerEpoch,
    updateMetadataBrokerEpoch: () => control.updateMetadataBrokerEpoch,
    partitionsOutOfSync: () => countOutOfSync(brokerId, image.topics(), hostedEpoch),
  };
}
