/**
 * Kafka's ZooKeeper layout: every path Fjord writes and the JSON of each znode, with Kafka's field
 * names and `version` fields so Kafka's own tooling (and Burrow, CMAK, zkCli users) read them.
 * One small entry per znode, encode and decode side by side (Kafka keeps the same table in
 * ZkData.scala).
 */

/** Persistent nodes a Kafka broker in ZooKeeper mode makes sure exist at start-up. */
export const PERSISTENT_PATHS: readonly string[] = [
  '/consumers',
  '/admin/delete_topics',
  '/brokers/ids',
  '/brokers/topics',
  '/brokers/seqid',
  '/config/changes',
  '/config/clients',
  '/config/topics',
  '/config/users',
  '/config/brokers',
  '/config/ips',
  '/isr_change_notification',
  '/latest_producer_id_block',
  '/log_dir_event_notification',
  '/cluster',
];

export const CLUSTER_ID_PATH = '/cluster/id';
export const CONTROLLER_PATH = '/controller';
export const CONTROLLER_EPOCH_PATH = '/controller_epoch';
export const BROKER_IDS_PATH = '/brokers/ids';
export const brokerIdPath = (id: number): string => `${BROKER_IDS_PATH}/${id}`;

const utf8 = (data: Buffer): string => data.toString('utf8');

function parseObject(data: Buffer, what: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(utf8(data));
  } catch {
    throw new Error(`malformed ${what} znode: ${JSON.stringify(utf8(data).slice(0, 200))}`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error(`malformed ${what} znode: not a JSON object`);
  return v as Record<string, unknown>;
}

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
    const body: Record<string, unknown> = {
      features: {},
      listener_security_protocol_map: Object.fromEntries(r.endpoints.map((e) => [e.listenerName, e.securityProtocol])),
      endpoints: r.endpoints.map((e) => `${e.listenerName}://${e.host}:${e.port}`),
      jmx_port: -1,
      port: plaintext ? plaintext.port : -1,
      host: plaintext ? plaintext.host : null,
      version: 5,
      timestamp: String(r.timestampMs),
    };
    if (r.rack !== null) body.rack = r.rack;
    return Buffer.from(JSON.stringify(body));
  },
  decode(id: number, data: Buffer): BrokerRegistration {
    const o = parseObject(data, brokerIdPath(id));
    const map = (typeof o.listener_security_protocol_map === 'object' && o.listener_security_protocol_map !== null
      ? o.listener_security_protocol_map
      : {}) as Record<string, unknown>;
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
  encode: (brokerId: number, timestampMs: number): Buffer =>
    Buffer.from(JSON.stringify({ version: 1, brokerid: brokerId, timestamp: String(timestampMs) })),
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
