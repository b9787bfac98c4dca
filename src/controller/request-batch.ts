/**
 * The requests one event sends (Kafka's ControllerBrokerRequestBatch): state changes add
 * LeaderAndIsr, UpdateMetadata and StopReplica entries per broker while the event runs; at its end
 * `sendRequestsToBrokers` builds one request of each kind per broker and hands them to a
 * `ControllerRequestSink` (the channel manager, or a capture in tests). Requests carry the
 * controller id and epoch, and the target's brokerEpoch so a restarted broker ignores requests
 * meant for its previous incarnation. Every form a version may need (grouped by topic, with topic
 * ids, or flat) is filled: the codec writes the one the negotiated version has.
 */
import type { LeaderAndIsrRequest, StopReplicaRequest, StopReplicaResponse, UpdateMetadataRequest } from '../protocol/messages/index.js';
import type { LeaderAndIsrPartitionState } from '../protocol/messages/04-leader-and-isr.js';
import type { UpdateMetadataBroker, UpdateMetadataPartitionState } from '../protocol/messages/06-update-metadata.js';
import { tpKey } from '../common/partition-keys.js';
import { LEADER_DURING_DELETE, parseTpKey, type ControllerContext, type TopicPartition } from './context.js';

export type ControllerRequest =
  | { api: 'LeaderAndIsr'; request: LeaderAndIsrRequest }
  | { api: 'UpdateMetadata'; request: UpdateMetadataRequest }
  | { api: 'StopReplica'; request: StopReplicaRequest; onResponse?: (response: StopReplicaResponse) => void };

/** Where a batch goes: queued per broker, in order, until answered or the broker is removed. */
export interface ControllerRequestSink {
  send(brokerId: number, request: ControllerRequest): void;
}

/** A StopReplica(delete) answer, per partition, for the topic deletion manager. */
export type StopReplicaDeleteCallback = (brokerId: number, results: { tp: TopicPartition; errorCode: number }[]) => void;

const SECURITY_PROTOCOL_IDS: Record<string, number> = { PLAINTEXT: 0, SSL: 1, SASL_PLAINTEXT: 2, SASL_SSL: 3 };

interface StopReplicaEntry {
  tp: TopicPartition;
  deletePartition: boolean;
  leaderEpoch: number;
}

export class ControllerBrokerRequestBatch {
  private readonly leaderAndIsr = new Map<number, Map<string, LeaderAndIsrPartitionState>>();
  private readonly updateMetadataBrokers = new Set<number>();
  private readonly updateMetadataPartitions = new Set<string>();
  private readonly stopReplica = new Map<number, Map<string, StopReplicaEntry>>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly controllerId: number,
    private readonly interBrokerListenerName: string,
    private readonly onStopReplicaDelete: StopReplicaDeleteCallback,
  ) {}

  isEmpty(): boolean {
    return this.leaderAndIsr.size === 0 && this.updateMetadataBrokers.size === 0 && this.stopReplica.size === 0;
  }

  clear(): void {
    this.leaderAndIsr.clear();
    this.updateMetadataBrokers.clear();
    this.updateMetadataPartitions.clear();
    this.stopReplica.clear();
  }

  /** The partition's current leader/ISR to its replicas on `brokerIds`; every live broker also learns it by UpdateMetadata. */
  addLeaderAndIsrRequestForBrokers(brokerIds: readonly number[], tp: TopicPartition, isNew: boolean): void {
    const key = tpKey(tp.topic, tp.partition);
    const l = this.ctx.leadership.get(key);
    const topic = this.ctx.topics.get(tp.topic);
    if (!l || !topic) return;
    for (const b of brokerIds) {
      if (b < 0) continue;
      let m = this.leaderAndIsr.get(b);
      if (!m) this.leaderAndIsr.set(b, (m = new Map()));
      const prev = m.get(key);
      m.set(key, {
        topicName: tp.topic,
        partitionIndex: tp.partition,
        controllerEpoch: l.state.controllerEpoch,
        leader: l.state.leader,
        leaderEpoch: l.state.leaderEpoch,
        isr: [...l.state.isr],
        partitionEpoch: l.zkVersion,
        replicas: [...(topic.assignment.get(tp.partition) ?? [])],
        addingReplicas: [...(topic.addingReplicas.get(tp.partition) ?? [])],
        removingReplicas: [...(topic.removingReplicas.get(tp.partition) ?? [])],
        isNew: (prev?.isNew ?? false) || isNew,
        leaderRecoveryState: 0,
      });
    }
    this.addUpdateMetadataRequestForBrokers(this.ctx.liveOrShuttingDownBrokerIds(), [tp]);
  }

  addStopReplicaRequestForBrokers(brokerIds: readonly number[], tp: TopicPartition, deletePartition: boolean): void {
    const key = tpKey(tp.topic, tp.partition);
    // Kafka sends the sentinel -2 on deletion so the broker stops whatever epoch it has.
    const leaderEpoch = deletePartition ? -2 : (this.ctx.leadership.get(key)?.state.leaderEpoch ?? -1);
    for (const b of brokerIds) {
      let m = this.stopReplica.get(b);
      if (!m) this.stopReplica.set(b, (m = new Map()));
      const prev = m.get(key);
      m.set(key, { tp, deletePartition: deletePartition || (prev?.deletePartition ?? false), leaderEpoch });
    }
  }

  /** UpdateMetadata (live brokers plus these partitions, possibly none) to `brokerIds`. */
  addUpdateMetadataRequestForBrokers(brokerIds: readonly number[], tps: readonly TopicPartition[]): void {
    for (const b of brokerIds) this.updateMetadataBrokers.add(b);
    for (const tp of tps) this.updateMetadataPartitions.add(tpKey(tp.topic, tp.partition));
  }

  sendRequestsToBrokers(controllerEpoch: number, sink: ControllerRequestSink): void {
    try {
      this.sendLeaderAndIsr(controllerEpoch, sink);
      this.sendUpdateMetadata(controllerEpoch, sink);
      this.sendStopReplica(controllerEpoch, sink);
    } finally {
      this.clear();
    }
  }

  private brokerEpoch(b: number): bigint {
    return this.ctx.liveBrokers.get(b)?.brokerEpoch ?? -1n;
  }

  private sendLeaderAndIsr(controllerEpoch: number, sink: ControllerRequestSink): void {
    for (const [b, states] of this.leaderAndIsr) {
      if (!this.ctx.liveBrokers.has(b)) continue; // Kafka drops requests for brokers not live
      const byTopic = new Map<string, LeaderAndIsrPartitionState[]>();
      const leaders = new Set<number>();
      for (const s of states.values()) {
        (byTopic.get(s.topicName) ?? byTopic.set(s.topicName, []).get(s.topicName)!).push(s);
        leaders.add(s.leader);
      }
      const liveLeaders = [...leaders].flatMap((id) => {
        const ep = this.ctx.liveBrokers.get(id)?.endpoints.find((e) => e.listenerName === this.interBrokerListenerName);
        return ep ? [{ brokerId: id, hostName: ep.host, port: ep.port }] : [];
      });
      sink.send(b, {
        api: 'LeaderAndIsr',
        request: {
          controllerId: this.controllerId,
          isKRaftController: false,
          controllerEpoch,
          brokerEpoch: this.brokerEpoch(b),
          type: 0, // incremental: brokers keep partitions not mentioned
          ungroupedPartitionStates: [...states.values()],
          topicStates: [...byTopic].map(([topicName, partitionStates]) => ({
            topicName,
            topicId: this.ctx.topics.get(topicName)?.topicId ?? '',
            partitionStates,
          })),
          liveLeaders,
        },
      });
    }
  }

  private updateMetadataPartitionState(key: string): UpdateMetadataPartitionState | undefined {
    const tp = parseTpKey(key);
    const l = this.ctx.leadership.get(key);
    if (!l || !this.ctx.topics.has(tp.topic)) return undefined;
    return {
      topicName: tp.topic,
      partitionIndex: tp.partition,
      controllerEpoch: l.state.controllerEpoch,
      leader: this.ctx.isTopicQueuedForDeletion(tp.topic) ? LEADER_DURING_DELETE : l.state.leader,
      leaderEpoch: l.state.leaderEpoch,
      isr: [...l.state.isr],
      zkVersion: l.zkVersion,
      replicas: [...this.ctx.replicasFor(tp)],
      offlineReplicas: this.ctx.offlineReplicas(tp),
    };
  }

  private liveBrokersForUpdateMetadata(): UpdateMetadataBroker[] {
    return [...this.ctx.liveBrokers.values()]
      .sort((a, b) => a.id - b.id)
      .map((b) => {
        // v0 has one host/port: the PLAINTEXT endpoint, as Kafka's registration's legacy fields.
        const plain = b.endpoints.find((e) => e.securityProtocol === 'PLAINTEXT');
        return {
          id: b.id,
          v0Host: plain?.host ?? '',
          v0Port: plain?.port ?? -1,
          endpoints: b.endpoints.map((e) => ({
            port: e.port,
            host: e.host,
            listener: e.listenerName,
            securityProtocol: SECURITY_PROTOCOL_IDS[e.securityProtocol] ?? 0,
          })),
          rack: b.rack,
        };
      });
  }

  private sendUpdateMetadata(controllerEpoch: number, sink: ControllerRequestSink): void {
    if (this.updateMetadataBrokers.size === 0) return;
    const states = [...this.updateMetadataPartitions].flatMap((k) => this.updateMetadataPartitionState(k) ?? []);
    const byTopic = new Map<string, UpdateMetadataPartitionState[]>();
    for (const s of states) (byTopic.get(s.topicName) ?? byTopic.set(s.topicName, []).get(s.topicName)!).push(s);
    const liveBrokers = this.liveBrokersForUpdateMetadata();
    for (const b of [...this.updateMetadataBrokers].sort((x, y) => x - y)) {
      if (!this.ctx.liveBrokers.has(b)) continue;
      sink.send(b, {
        api: 'UpdateMetadata',
        request: {
          controllerId: this.controllerId,
          isKRaftController: false,
          type: 0,
          controllerEpoch,
          brokerEpoch: this.brokerEpoch(b),
          ungroupedPartitionStates: states,
          topicStates: [...byTopic].map(([topicName, partitionStates]) => ({
            topicName,
            topicId: this.ctx.topics.get(topicName)?.topicId ?? '',
            partitionStates,
          })),
          liveBrokers,
        },
      });
    }
  }

  private sendStopReplica(controllerEpoch: number, sink: ControllerRequestSink): void {
    for (const [b, entries] of this.stopReplica) {
      if (!this.ctx.liveBrokers.has(b)) continue;
      const list = [...entries.values()];
      // v0-v2 have one deletePartitions flag per request: split deletes from plain stops.
      for (const deleting of [false, true]) {
        const part = list.filter((e) => e.deletePartition === deleting);
        if (part.length === 0) continue;
        const byTopic = new Map<string, StopReplicaEntry[]>();
        for (const e of part) (byTopic.get(e.tp.topic) ?? byTopic.set(e.tp.topic, []).get(e.tp.topic)!).push(e);
        const request: StopReplicaRequest = {
          controllerId: this.controllerId,
          isKRaftController: false,
          controllerEpoch,
          brokerEpoch: this.brokerEpoch(b),
          deletePartitions: deleting,
          ungroupedPartitions: part.map((e) => ({ topicName: e.tp.topic, partitionIndex: e.tp.partition })),
          topics: [...byTopic].map(([name, es]) => ({ name, partitionIndexes: es.map((e) => e.tp.partition) })),
          topicStates: [...byTopic].map(([topicName, es]) => ({
            topicName,
            partitionStates: es.map((e) => ({ partitionIndex: e.tp.partition, leaderEpoch: e.leaderEpoch, deletePartition: e.deletePartition })),
          })),
        };
        const tps = part.map((e) => e.tp);
        sink.send(b, {
          api: 'StopReplica',
          request,
          onResponse: deleting
            ? (response) => {
                const errs = new Map(response.partitionErrors.map((p) => [tpKey(p.topicName, p.partitionIndex), p.errorCode]));
                this.onStopReplicaDelete(
                  b,
                  tps.map((tp) => ({ tp, errorCode: response.errorCode !== 0 ? response.errorCode : (errs.get(tpKey(tp.topic, tp.partition)) ?? 0) })),
                );
              }
            : undefined,
        });
      }
    }
  }
}
