/**
 * Kafka's ZooKeeper znodes as the broker and the controller use them: the JSON of each, with
 * Kafka's field names and `version` fields so Kafka's own tooling (and Burrow, CMAK, zkCli users)
 * read them. One small entry per znode, encode and decode side by side (Kafka keeps the same
 * table in ZkData.scala). The paths are in zk-paths.ts; the old consumer's znodes in
 * zk-consumer-znodes.ts.
 */

import type { ConfigEntityType, LeaderIsrState, PartitionReassignment, TopicPartitionRef } from './zk-client-types.js';
import {
  CLUSTER_ID_PATH,
  CONFIG_CHANGES_PATH,
  CONTROLLER_EPOCH_PATH,
  CONTROLLER_PATH,
  FEATURE_PATH,
  ISR_CHANGE_NOTIFICATION_PATH,
  PREFERRED_REPLICA_ELECTION_PATH,
  PRODUCER_ID_BLOCK_PATH,
  REASSIGN_PARTITIONS_PATH,
  brokerIdPath,
  topicPath,
} from './zk-paths.js';
import { intField, intList, parseObject, partitionMap, partitionObject, topicPartitionList, utf8 } from './znode-json.js';

/** `/cluster/id`: `{"version":"1","id":"<cluster id>"}` (version is a string in Kafka's JSON). */
export const ClusterIdZNode = {
  encode: (id: string): Buffer => Buffer.from(JSON.stringify({ version: '1', id })),
  decode(data: Buffer): string {
    const o = parseObject(data, CLUSTER_ID_PATH);
    if (typeof o.id !== 'string' || o.id === '') throw new Error(`malformed ${CLUSTER_ID_PATH} znode: no id`);
    return o.id;
  },
};

export interface BrokerEndpoint {
  listenerName: string;
  securityProtocol: string;
  host: string;
  port: number;
}

export interface BrokerRegistration {
  id: number;
  endpoints: BrokerEndpoint[];
  rack: string | null;
  timestampMs: number;
}

/**
 * `/brokers/ids/<id>` (ephemeral), Kafka's version 5: endpoints as `NAME://host:port`, the
 * listener → security protocol map, the legacy host/port of the PLAINTEXT listener (null / -1
 * without one), rack only when set, jmx_port -1, the timestamp as a string, and features.
 */
export const BrokerIdZNode = {
  encode(r: BrokerRegistration): Buffer {
    const plaintext = r.endpoints.find((e) => e.securityProtocol === 'PLAINTEXT');
    // Key order as Kafka's (hash-ordered) map prints it; rack follows endpoints when set.
    const body: Record<string, unknown> = {
      features: {},
      listener_security_protocol_map: Object.fromEntries(r.endpoints.map((e) => [e.listenerName, e.securityProtocol])),
      endpoints: r.endpoints.map((e) => `${e.listenerName}://${e.host}:${e.port}`),
      ...(r.rack !== null ? { rack: r.rack } : {}),
      jmx_port: -1,
      port: plaintext ? plaintext.port : -1,
      host: plaintext ? plaintext.host : null,
      version: 5,
      timestamp: String(r.timestampMs),
    };
    return Buffer.from(JSON.stringify(body));
  },
  decode(id: number, data: Buffer): BrokerRegistration {
    const o = parseObject(data, brokerIdPath(id));
    const map = (
      typeof o.listener_security_protocol_map === 'object' && o.listener_security_protocol_map !== null ? o.listener_security_protocol_map : {}
    ) as Record<string, unknown>;
    const endpoints: BrokerEndpoint[] = [];
    for (const ep of Array.isArray(o.endpoints) ? o.endpoints : []) {
      const m = typeof ep === 'string' ? /^([^:]+):\/\/\[?([^\]]*)\]?:(\d+)$/.exec(ep) : null;
      if (!m) continue;
      const name = m[1]!;
      const proto = map[name];
      endpoints.push({ listenerName: name, securityProtocol: typeof proto === 'string' ? proto : name, host: m[2]!, port: Number(m[3]) });
    }
    if (endpoints.length === 0 && typeof o.host === 'string' && typeof o.port === 'number') {
      endpoints.push({ listenerName: 'PLAINTEXT', securityProtocol: 'PLAINTEXT', host: o.host, port: o.port });
    }
    return { id, endpoints, rack: typeof o.rack === 'string' ? o.rack : null, timestampMs: Number(o.timestamp ?? 0) };
  },
};

/** `/controller` (ephemeral): `{"version":1,"brokerid":N,"timestamp":"<ms>"}`. */
export const ControllerZNode = {
  encode: (brokerId: number, timestampMs: number): Buffer => Buffer.from(JSON.stringify({ version: 1, brokerid: brokerId, timestamp: String(timestampMs) })),
  decode(data: Buffer): number {
    const text = utf8(data).trim();
    // Kafka before 0.9 wrote the bare broker id.
    if (/^\d+$/.test(text)) return Number(text);
    const o = parseObject(data, CONTROLLER_PATH);
    if (typeof o.brokerid !== 'number') throw new Error(`malformed ${CONTROLLER_PATH} znode: no brokerid`);
    return o.brokerid;
  },
};

/** `/controller_epoch`: the epoch as decimal text. */
export const ControllerEpochZNode = {
  encode: (epoch: number): Buffer => Buffer.from(String(epoch)),
  decode(data: Buffer): number {
    const n = Number(utf8(data).trim());
    if (!Number.isInteger(n) || n < 0) throw new Error(`malformed ${CONTROLLER_EPOCH_PATH} znode: ${JSON.stringify(utf8(data))}`);
    return n;
  },
};

export interface TopicZNodeData {
  /** Kafka's printable (base64url) uuid; undefined for topics created before Kafka 2.8. */
  topicId: string | undefined;
  partitions: Map<number, number[]>;
  addingReplicas: Map<number, number[]>;
  removingReplicas: Map<number, number[]>;
}

/**
 * `/brokers/topics/<t>`, Kafka's version 3: the assignment, the topic id, and the replicas being
 * added/removed by a reassignment (only partitions that have some are listed). Decoding also takes
 * version 1 (`{"version":1,"partitions":{..}}`) and 2 (no topic id).
 */
export const TopicZNode = {
  encode(t: Omit<TopicZNodeData, 'topicId'> & { topicId: string | undefined }): Buffer {
    const nonEmpty = (m: ReadonlyMap<number, readonly number[]>): Map<number, readonly number[]> => new Map([...m].filter(([, r]) => r.length > 0));
    const body: Record<string, unknown> = { partitions: partitionObject(t.partitions) };
    if (t.topicId !== undefined) body.topic_id = t.topicId;
    body.adding_replicas = partitionObject(nonEmpty(t.addingReplicas));
    body.removing_replicas = partitionObject(nonEmpty(t.removingReplicas));
    body.version = 3;
    return Buffer.from(JSON.stringify(body));
  },
  decode(topic: string, data: Buffer): TopicZNodeData {
    const what = topicPath(topic);
    const o = parseObject(data, what);
    return {
      topicId: typeof o.topic_id === 'string' ? o.topic_id : undefined,
      partitions: partitionMap(o.partitions, what),
      addingReplicas: partitionMap(o.adding_replicas, what),
      removingReplicas: partitionMap(o.removing_replicas, what),
    };
  },
};

/**
 * `/brokers/topics/<t>/partitions/<p>/state`: leader, leader epoch, ISR and the epoch of the
 * controller that wrote it, in the key order Kafka prints. `leader_recovery_state` (Kafka 3.2+,
 * KIP-704) is written only when not RECOVERED (0), as Kafka does.
 */
export const PartitionStateZNode = {
  encode(s: LeaderIsrState & { leaderRecoveryState?: number }): Buffer {
    const body: Record<string, unknown> = {
      controller_epoch: s.controllerEpoch,
      leader: s.leader,
      version: 1,
      leader_epoch: s.leaderEpoch,
      isr: s.isr,
    };
    if (s.leaderRecoveryState !== undefined && s.leaderRecoveryState !== 0) body.leader_recovery_state = s.leaderRecoveryState;
    return Buffer.from(JSON.stringify(body));
  },
  decode(data: Buffer, what = 'partition state'): LeaderIsrState & { leaderRecoveryState: number } {
    const o = parseObject(data, what);
    return {
      leader: intField(o, 'leader', what),
      leaderEpoch: intField(o, 'leader_epoch', what),
      isr: intList(o.isr, what),
      controllerEpoch: intField(o, 'controller_epoch', what),
      leaderRecoveryState: typeof o.leader_recovery_state === 'number' ? o.leader_recovery_state : 0,
    };
  },
};

/** `/config/<type>/<name>`: `{"version":1,"config":{"k":"v"}}`; values are strings. */
export const ConfigEntityZNode = {
  encode: (config: Record<string, string>): Buffer => Buffer.from(JSON.stringify({ version: 1, config })),
  /** Kafka reads an empty or config-less node as no configs. */
  decode(data: Buffer, what = 'config entity'): Record<string, string> {
    if (data.length === 0) return {};
    const o = parseObject(data, what);
    const c = o.config;
    if (typeof c !== 'object' || c === null || Array.isArray(c)) return {};
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(c as Record<string, unknown>)) out[k] = typeof v === 'string' ? v : JSON.stringify(v);
    return out;
  },
};

const ENTITY_TYPES: readonly ConfigEntityType[] = ['topics', 'brokers', 'clients', 'users', 'ips', 'client-metrics', 'groups'];

/**
 * `/config/changes/config_change_NNNNNNNNNN` (persistent sequential): `{"version":2,"entity_path":"topics/<t>"}`.
 * Decoding also reads version 1 (`entity_type` + `entity_name`). For nested paths
 * (`users/<u>/clients/<c>`) the type is the first segment and the name the rest.
 */
export const ConfigChangeNotificationZNode = {
  encode: (entityType: ConfigEntityType, entityName: string): Buffer => Buffer.from(JSON.stringify({ version: 2, entity_path: `${entityType}/${entityName}` })),
  decode(data: Buffer): { entityType: ConfigEntityType; entityName: string } {
    const what = CONFIG_CHANGES_PATH;
    const o = parseObject(data, what);
    let type: unknown;
    let name: unknown;
    if (o.version === 1) {
      [type, name] = [o.entity_type, o.entity_name];
    } else {
      if (typeof o.entity_path !== 'string') throw new Error(`malformed ${what} znode: no entity_path`);
      const slash = o.entity_path.indexOf('/');
      [type, name] = slash < 0 ? [o.entity_path, ''] : [o.entity_path.slice(0, slash), o.entity_path.slice(slash + 1)];
    }
    if (!ENTITY_TYPES.includes(type as ConfigEntityType) || typeof name !== 'string' || name === '') {
      throw new Error(`malformed ${what} znode: entity ${JSON.stringify(type)}/${JSON.stringify(name)}`);
    }
    return { entityType: type as ConfigEntityType, entityName: name };
  },
};

/** `/admin/reassign_partitions` (deprecated by Kafka 2.4's API, still honoured): `{"version":1,"partitions":[{"topic":..,"partition":..,"replicas":[..]}]}`. */
export const ReassignPartitionsZNode = {
  encode: (r: readonly PartitionReassignment[]): Buffer =>
    Buffer.from(JSON.stringify({ version: 1, partitions: r.map((p) => ({ topic: p.topic, partition: p.partition, replicas: p.replicas })) })),
  decode(data: Buffer): PartitionReassignment[] {
    const what = REASSIGN_PARTITIONS_PATH;
    const o = parseObject(data, what);
    const list = o.partitions;
    const refs = topicPartitionList(list, what);
    return refs.map((ref, i) => ({ ...ref, replicas: intList((list as Record<string, unknown>[])[i]!.replicas, what) }));
  },
};

/** `{"version":1,"partitions":[{"topic":..,"partition":..}]}`: preferred election intents and ISR change notifications share it. */
const partitionListZNode = (what: string) => ({
  encode: (ps: readonly TopicPartitionRef[]): Buffer =>
    Buffer.from(JSON.stringify({ version: 1, partitions: ps.map((p) => ({ topic: p.topic, partition: p.partition })) })),
  decode: (data: Buffer): TopicPartitionRef[] => topicPartitionList(parseObject(data, what).partitions, what),
});

/** `/admin/preferred_replica_election`. */
export const PreferredReplicaElectionZNode = partitionListZNode(PREFERRED_REPLICA_ELECTION_PATH);
/** `/isr_change_notification/isr_change_NNNNNNNNNN` (persistent sequential). */
export const IsrChangeNotificationZNode = partitionListZNode(ISR_CHANGE_NOTIFICATION_PATH);

export interface ProducerIdBlock {
  brokerId: number;
  /** First and last id of the block, inclusive. */
  start: bigint;
  end: bigint;
}

/** `/latest_producer_id_block`: `{"version":1,"broker":0,"block_start":"0","block_end":"999"}` (ids as strings: they are 64-bit). Empty before the first allocation. */
export const ProducerIdBlockZNode = {
  encode: (b: ProducerIdBlock): Buffer =>
    Buffer.from(JSON.stringify({ version: 1, broker: b.brokerId, block_start: String(b.start), block_end: String(b.end) })),
  decode(data: Buffer): ProducerIdBlock | undefined {
    if (data.length === 0) return undefined;
    const what = PRODUCER_ID_BLOCK_PATH;
    const o = parseObject(data, what);
    const big = (key: string): bigint => {
      const v = o[key];
      if ((typeof v !== 'string' || !/^\d+$/.test(v)) && typeof v !== 'number') throw new Error(`malformed ${what} znode: ${key}`);
      return BigInt(v);
    };
    return { brokerId: intField(o, 'broker', what), start: big('block_start'), end: big('block_end') };
  },
};

export interface FeatureZNodeData {
  /** 1 up to Kafka 3.2 (min and max level per feature), 2 from 3.3 (max only). */
  version: 1 | 2;
  /** 1 enabled, 0 disabled (KIP-584). */
  status: 0 | 1;
  /** feature -> finalized max version level. */
  features: Record<string, number>;
}

/** `/feature` (KIP-584): `{"features":{},"version":1,"status":1}` in Kafka's key order. */
export const FeatureZNode = {
  encode(f: FeatureZNodeData): Buffer {
    const features = Object.fromEntries(
      Object.entries(f.features).map(([k, v]) => [k, f.version === 1 ? { max_version_level: v, min_version_level: v } : { max_version_level: v }]),
    );
    return Buffer.from(JSON.stringify({ features, version: f.version, status: f.status }));
  },
  decode(data: Buffer): FeatureZNodeData {
    const what = FEATURE_PATH;
    const o = parseObject(data, what);
    const version = intField(o, 'version', what);
    const status = intField(o, 'status', what);
    if ((version !== 1 && version !== 2) || (status !== 0 && status !== 1)) throw new Error(`malformed ${what} znode: version ${version} status ${status}`);
    const features: Record<string, number> = {};
    const f = o.features;
    if (typeof f === 'object' && f !== null) {
      for (const [k, v] of Object.entries(f as Record<string, unknown>)) {
        const max = typeof v === 'object' && v !== null ? (v as Record<string, unknown>).max_version_level : undefined;
        if (typeof max === 'number') features[k] = max;
      }
    }
    return { version, status, features };
  },
};
