// Broker configuration keys of identity and cluster membership (broker.id, zookeeper.*), the
// network (listeners, sockets, connection and request limits) and SASL on listeners. One of the
// area tables that defs.ts assembles into the single list of every key.

import { def, atLeast, INT_MAX, NO_EFFECT, type ConfigDef } from './config-def.js';

export const CLUSTER_AND_NETWORK_DEFS: readonly ConfigDef[] = [
  // Identity and cluster
  def('broker.id', 'int', '0', 'Id of this broker; Fjord defaults to 0 (Kafka: -1, generated). -1 asks for a generated id.', atLeast(-1)),
  def('node.id', 'int', null, 'Alias of broker.id (KRaft name); broker.id wins when both are set.', atLeast(-1)),
  def('cluster.id', 'string', null, 'Cluster id to report; generated and stored in the log dir when unset.'),
  def('broker.rack', 'string', null, 'Rack of this broker, reported in metadata.'),
  def(
    'zookeeper.connect',
    'string',
    null,
    'ZooKeeper connect string (optional /chroot); unset means embedded single-broker mode. Set, the broker is part of a ZooKeeper-mode cluster: topics, partition states and configs live in ZooKeeper, one broker is the elected controller.',
  ),
  def('zookeeper.session.timeout.ms', 'int', '18000', 'ZooKeeper session timeout.', atLeast(1)),
  def('zookeeper.connection.timeout.ms', 'int', null, 'Max wait for the ZooKeeper connection; defaults to the session timeout.', atLeast(1)),
  def('zookeeper.set.acl', 'boolean', 'false', 'Use secure ACLs on znodes.', NO_EFFECT),
  def('zookeeper.max.in.flight.requests', 'int', '10', 'Max unacknowledged ZooKeeper requests.', { ...atLeast(1), ...NO_EFFECT }),
  def('inter.broker.protocol.version', 'string', null, 'Inter-broker protocol version.', NO_EFFECT),
  def('log.message.format.version', 'string', '3.0-IV1', 'Legacy message format version.', NO_EFFECT),
  def('process.roles', 'list', '', 'KRaft roles; Fjord has no KRaft mode.', NO_EFFECT),

  // Network
  def('listeners', 'list', 'PLAINTEXT://127.0.0.1:9092', 'Comma-separated NAME://host:port listeners; empty host binds all interfaces.'),
  def('advertised.listeners', 'list', null, 'Listeners given to clients in metadata; defaults to listeners.'),
  def(
    'listener.security.protocol.map',
    'list',
    'PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL',
    'Listener name to security protocol (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL).',
  ),
  def(
    'inter.broker.listener.name',
    'string',
    null,
    'Listener used between brokers; defaults to the one named by security.inter.broker.protocol when that is set, else the first listener.',
  ),
  def(
    'security.inter.broker.protocol',
    'string',
    'PLAINTEXT',
    'Security protocol between brokers: the inter-broker listener is the one of this name (do not set with inter.broker.listener.name).',
    { validator: { oneOf: ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'] } },
  ),
  def('socket.request.max.bytes', 'int', '104857600', 'Largest request frame accepted; bigger frames close the connection.', atLeast(1)),
  def('socket.send.buffer.bytes', 'int', '102400', 'SO_SNDBUF hint; -1 keeps the OS default.', NO_EFFECT),
  def('socket.receive.buffer.bytes', 'int', '102400', 'SO_RCVBUF hint; -1 keeps the OS default.', NO_EFFECT),
  def('socket.listen.backlog.size', 'int', '50', 'Pending connection backlog per listener.', atLeast(1)),
  def('connections.max.idle.ms', 'long', '600000', 'Idle connections are closed after this long.'),
  def(
    'max.connections',
    'int',
    INT_MAX,
    'Max connections in total (listener.name.<l>.max.connections per listener); beyond it new connections wait for a slot. The inter-broker listener is exempt when there are several listeners. Dynamic.',
    atLeast(0),
  ),
  def(
    'max.connections.per.ip',
    'int',
    INT_MAX,
    'Max open connections from one IP address; beyond it a new connection is closed at once. 0 needs max.connections.per.ip.overrides. Dynamic.',
    atLeast(0),
  ),
  def('queued.max.requests', 'int', '500', 'Unanswered requests per connection before reading pauses.', atLeast(1)),
  def(
    'max.request.partition.size.limit',
    'int',
    '2000',
    'The most partitions one DescribeTopicPartitions response holds (the request may ask for fewer).',
    atLeast(1),
  ),
  def(
    'queued.max.request.bytes',
    'long',
    '268435456',
    'Request bytes held broker-wide (being read or not yet handled) before connections stop reading; -1 = unbounded (Kafka default -1, Fjord 256 MiB). Must be -1 or >= socket.request.max.bytes.',
    atLeast(-1),
  ),
  def(
    'queued.max.response.bytes.per.connection',
    'int',
    '1048576',
    'Fjord: answers ready for one connection and not yet taken by the kernel before the broker stops reading its requests (values under 65536 act as 65536). Requests whose answer can be large (Fetch, Metadata, Describe*...) are also handled one at a time per connection.',
    atLeast(1),
  ),
  def(
    'socket.request.receive.timeout.ms',
    'long',
    '30000',
    'Fjord: a request frame must arrive whole within this many ms of its first byte, else the connection is closed; 0 = never.',
    atLeast(0),
  ),
  def(
    'num.network.threads',
    'int',
    '1',
    "Threads that own client connections (docs/threads.md step 4): 1 = the main thread accepts, reads and writes every connection (today's broker); M > 1 = M network threads accept on every listener and do socket I/O, TLS and framing, handing whole request frames to the main thread. Default 1, not Kafka's 3, until the whole suite passes at M > 1. Read at start.",
    atLeast(1),
  ),
  def(
    'num.io.threads',
    'int',
    '1',
    "Threads that host partitions (docs/threads.md): 1 = every partition on the main thread (today's broker, no worker); N > 1 = shard 0 (the internal topics) on the main thread and N-1 shard worker threads for the other topics, embedded mode only (with zookeeper.connect set the broker warns and runs single-threaded). Default 1, not Kafka's 8, until the whole suite passes at N > 1.",
    atLeast(1),
  ),
  def('background.threads', 'int', '10', 'Background task threads.', { ...atLeast(1), ...NO_EFFECT }),
  def('request.timeout.ms', 'int', '30000', 'Inter-broker request timeout.', atLeast(0)),

  // SASL (src/security/sasl): per listener as listener.name.<l>.<key>, and per mechanism as
  // listener.name.<l>.<mechanism>.<key> for sasl.jaas.config and connections.max.reauth.ms.
  def(
    'sasl.enabled.mechanisms',
    'list',
    'GSSAPI',
    'SASL mechanisms enabled on SASL listeners; Fjord serves PLAIN, SCRAM-SHA-256 and SCRAM-SHA-512 (a SASL listener with none of them stops start-up).',
  ),
  def(
    'sasl.jaas.config',
    'password',
    null,
    'JAAS login module and options (PlainLoginModule user_<name>="<password>" for PLAIN users; username/password for the inter-broker login); set it per listener and mechanism.',
    { sensitive: true },
  ),
  def('sasl.mechanism.inter.broker.protocol', 'string', 'GSSAPI', 'SASL mechanism brokers use towards each other when the inter-broker listener is SASL.'),
  def(
    'sasl.server.max.receive.size',
    'int',
    '524288',
    'Largest frame a SASL listener reads before the client authenticated; bigger closes the connection.',
    atLeast(1),
  ),
  def(
    'connection.failed.authentication.delay.ms',
    'int',
    '100',
    'Delay before the answer to a failed authentication is sent and the connection closed.',
    atLeast(0),
  ),
  def(
    'connections.max.reauth.ms',
    'long',
    '0',
    'Lifetime of an authenticated SASL session (KIP-368); a client must re-authenticate within it or its next request closes the connection. 0 = sessions do not expire.',
    atLeast(0),
  ),

  // Delegation tokens (KIP-48; src/security/delegation-tokens): disabled until a secret is set.
  def(
    'delegation.token.secret.key',
    'password',
    null,
    'Secret that signs delegation tokens (HMAC-SHA512), the same on every broker; unset = tokens disabled (DELEGATION_TOKEN_AUTH_DISABLED).',
    { sensitive: true },
  ),
  def('delegation.token.master.key', 'password', null, 'Deprecated alias of delegation.token.secret.key, used when that is unset.', { sensitive: true }),
  def('delegation.token.max.lifetime.ms', 'long', '604800000', 'Longest a token can live, renewals included.', atLeast(1)),
  def('delegation.token.expiry.time.ms', 'long', '86400000', 'A token expires this long after it is created or renewed, unless renewed.', atLeast(1)),
  def('delegation.token.expiry.check.interval.ms', 'long', '3600000', 'How often expired tokens are removed.', atLeast(1)),

  // Metrics (src/server/metrics, docs/operations.md).
  def(
    'metrics.recording.enable',
    'boolean',
    'true',
    'Fjord: record request metrics and broker topic metrics on the produce and fetch paths (off: those families are absent and requests read no clock for them).',
  ),
  def(
    'metrics.partition.level.enable',
    'boolean',
    'true',
    'Fjord: export the metric families labelled per partition (off: only per-topic and broker-wide families).',
  ),
  def(
    'metrics.consumer.lag.refresh.ms',
    'long',
    '15000',
    "Fjord: how often the group coordinator refreshes what consumer lag needs from other brokers (their partitions' end offsets) and the timestamps of the records at committed offsets.",
    atLeast(100),
  ),
  // Client telemetry (KIP-714, src/server/telemetry).
  def('telemetry.max.bytes', 'int', '1048576', 'The most bytes of metrics a client may push at once (compressed, and Fjord: decompressed too).', atLeast(1)),
  def(
    'metrics.client.telemetry.max.series',
    'int',
    '10000',
    "Fjord: the most series of clients' pushed metrics the metrics endpoint re-exports, over all clients; a push beyond it keeps what fits.",
    atLeast(0),
  ),
];
