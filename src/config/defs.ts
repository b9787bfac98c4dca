// The table of broker configuration keys Fjord understands: Kafka's names, types and defaults.
// DescribeConfigs lists these; BrokerConfig is built from them. Keys marked `noEffect` are accepted
// so that a stock Kafka server.properties loads without warnings, but Fjord does not act on them.

export type ConfigType = 'boolean' | 'string' | 'int' | 'short' | 'long' | 'double' | 'list' | 'class' | 'password';

export interface ConfigValidator {
  min?: number;
  max?: number;
  /** Allowed values (for 'string') or allowed items (for 'list'), compared case-sensitively. */
  oneOf?: readonly string[];
}

export interface ConfigDef {
  name: string;
  type: ConfigType;
  /** Kafka's textual default, as DescribeConfigs shows it; null = no default. */
  default: string | null;
  /** One short line. */
  doc: string;
  /** Values are hidden from DescribeConfigs. */
  sensitive: boolean;
  validator?: ConfigValidator;
  /** Accepted for compatibility only. */
  noEffect?: boolean;
}

/** Kafka's DescribeConfigs configType codes. */
export const CONFIG_TYPE_CODES: Readonly<Record<ConfigType, number>> = {
  boolean: 1,
  string: 2,
  int: 3,
  short: 4,
  long: 5,
  double: 6,
  list: 7,
  class: 8,
  password: 9,
};

const INT_MAX = '2147483647';
const LONG_MAX = '9223372036854775807';

function def(
  name: string,
  type: ConfigType,
  defaultValue: string | null,
  doc: string,
  extra: { validator?: ConfigValidator; noEffect?: boolean; sensitive?: boolean } = {},
): ConfigDef {
  return { name, type, default: defaultValue, doc, sensitive: extra.sensitive ?? false, validator: extra.validator, noEffect: extra.noEffect };
}
const atLeast = (min: number): { validator: ConfigValidator } => ({ validator: { min } });
const NO_EFFECT = { noEffect: true } as const;

export const BROKER_CONFIG_DEFS: readonly ConfigDef[] = [
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
  def('log.message.format.version', 'string', null, 'Legacy message format version.', NO_EFFECT),
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
  def('num.network.threads', 'int', '3', 'Network threads (single event loop in Fjord).', { ...atLeast(1), ...NO_EFFECT }),
  def('num.io.threads', 'int', '8', 'Request handler threads (single event loop in Fjord).', { ...atLeast(1), ...NO_EFFECT }),
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

  // Topics and log
  def('log.dirs', 'list', null, 'Directories holding partition logs; falls back to log.dir.'),
  def('log.dir', 'string', './data/kafka-logs', 'Log directory used when log.dirs is unset (relative to the working directory).'),
  def('num.partitions', 'int', '1', 'Partitions of auto-created topics.', atLeast(1)),
  def('default.replication.factor', 'int', '1', 'Replication factor of auto-created topics.', atLeast(1)),
  def('auto.create.topics.enable', 'boolean', 'true', 'Create unknown topics on metadata/produce requests.'),
  def(
    'auto.create.topics.max.per.request',
    'int',
    '1000',
    'Fjord: most topics one Metadata or Produce request may auto-create; the others named are answered UNKNOWN_TOPIC_OR_PARTITION (retriable) and created by later requests.',
    atLeast(0),
  ),
  def('delete.topic.enable', 'boolean', 'true', 'Allow DeleteTopics.'),
  def(
    'max.partitions.per.request',
    'int',
    '10000',
    'Most new partitions one CreateTopics or CreatePartitions request may create in total (Kafka hard-codes 10000); more is refused with POLICY_VIOLATION.',
    atLeast(1),
  ),
  def(
    'max.broker.partitions',
    'int',
    '10000',
    'Most partitions this broker hosts (KIP-578); creations beyond it are refused with POLICY_VIOLATION.',
    atLeast(1),
  ),
  def('max.partitions', 'int', INT_MAX, 'Most partitions in the cluster (KIP-578); creations beyond it are refused with POLICY_VIOLATION.', atLeast(1)),
  def('message.max.bytes', 'int', '1048588', 'Largest record batch accepted (topic: max.message.bytes).', atLeast(0)),
  def(
    'message.max.decompression.ratio',
    'int',
    '32',
    'A produced batch (or legacy message set) may inflate to at most max.message.bytes times this; beyond, MESSAGE_TOO_LARGE.',
    atLeast(1),
  ),
  def('log.segment.bytes', 'int', '1073741824', 'Segment file size before rolling.', atLeast(14)),
  def('log.roll.ms', 'long', null, 'Roll a segment after this age; overrides log.roll.hours.'),
  def('log.roll.hours', 'int', '168', 'Roll a segment after this many hours.', atLeast(1)),
  def('log.roll.jitter.ms', 'long', null, 'Random jitter subtracted from the roll time; overrides log.roll.jitter.hours.'),
  def('log.roll.jitter.hours', 'int', '0', 'Random jitter (hours) subtracted from the roll time.', atLeast(0)),
  def('log.retention.ms', 'long', null, 'Delete segments older than this; -1 = no limit. Wins over minutes/hours.'),
  def('log.retention.minutes', 'int', null, 'Retention in minutes; wins over log.retention.hours.'),
  def('log.retention.hours', 'int', '168', 'Retention in hours.'),
  def('log.retention.bytes', 'long', '-1', 'Max partition size before deleting old segments; -1 = no limit.'),
  def('log.retention.check.interval.ms', 'long', '300000', 'How often retention is checked.', atLeast(1)),
  def('log.segment.delete.delay.ms', 'long', '60000', 'Delay before a deleted segment file is removed.', atLeast(0)),
  def('log.index.interval.bytes', 'int', '4096', 'Bytes between offset index entries.', atLeast(0)),
  def('log.index.size.max.bytes', 'int', '10485760', 'Max offset index file size.', atLeast(4)),
  def('log.flush.interval.messages', 'long', LONG_MAX, 'Fsync after this many messages.', atLeast(1)),
  def('log.flush.interval.ms', 'long', null, 'Fsync after this long; defaults to log.flush.scheduler.interval.ms.'),
  def('log.flush.scheduler.interval.ms', 'long', LONG_MAX, 'How often the flusher checks logs.'),
  def('log.flush.offset.checkpoint.interval.ms', 'int', '60000', 'How often the recovery point is checkpointed.', atLeast(0)),
  def(
    'log.segment.max.open.files',
    'int',
    '-1',
    'Segment files kept open at once (idle ones are closed and reopened on demand); -1 derives it from the open-file limit (half of ulimit -n).',
    atLeast(-1),
  ),
  def('log.preallocate', 'boolean', 'false', 'Preallocate segment files.', NO_EFFECT),
  def('num.recovery.threads.per.data.dir', 'int', '1', 'Threads for log recovery per directory.', { ...atLeast(1), ...NO_EFFECT }),
  def('log.cleanup.policy', 'list', 'delete', 'delete and/or compact.', { validator: { oneOf: ['delete', 'compact'] } }),
  def('log.cleaner.enable', 'boolean', 'true', 'Run the log compactor.'),
  def('log.cleaner.threads', 'int', '1', 'Compaction threads.', { ...atLeast(0), ...NO_EFFECT }),
  def('log.cleaner.backoff.ms', 'long', '15000', 'Sleep when no log needs cleaning.', atLeast(0)),
  def('log.cleaner.delete.retention.ms', 'long', '86400000', 'How long tombstones are kept after compaction.', atLeast(0)),
  def('log.cleaner.min.cleanable.ratio', 'double', '0.5', 'Dirty ratio that triggers compaction.', { validator: { min: 0, max: 1 } }),
  def('log.cleaner.min.compaction.lag.ms', 'long', '0', 'Minimum age before a record may be compacted.', atLeast(0)),
  def('log.cleaner.max.compaction.lag.ms', 'long', LONG_MAX, 'Maximum age before a record must be compacted.', atLeast(1)),
  def('log.message.timestamp.type', 'string', 'CreateTime', 'CreateTime or LogAppendTime.', { validator: { oneOf: ['CreateTime', 'LogAppendTime'] } }),
  def('log.message.timestamp.difference.max.ms', 'long', LONG_MAX, 'Max allowed gap between record and broker time.', atLeast(0)),
  def('log.message.downconversion.enable', 'boolean', 'true', 'Down-convert for old fetchers.', NO_EFFECT),
  // Replication throttles (dynamic broker configs only; kafka-reassign-partitions --throttle sets them).
  def('leader.replication.throttled.rate', 'long', LONG_MAX, 'Bytes/s a leader may send to throttled follower replicas.', { ...atLeast(0), ...NO_EFFECT }),
  def('follower.replication.throttled.rate', 'long', LONG_MAX, 'Bytes/s a follower may fetch for throttled replicas.', { ...atLeast(0), ...NO_EFFECT }),
  def('replica.alter.log.dirs.io.max.bytes.per.second', 'long', LONG_MAX, 'Bytes/s for moving replicas between log dirs.', { ...atLeast(0), ...NO_EFFECT }),
  def('compression.type', 'string', 'producer', 'Broker-side compression; producer keeps what the producer sent.', {
    validator: { oneOf: ['uncompressed', 'zstd', 'lz4', 'snappy', 'gzip', 'producer'] },
  }),
  def('min.insync.replicas', 'int', '1', 'Replicas that must acknowledge an acks=all produce.', atLeast(1)),
  def('fetch.max.bytes', 'int', '57671680', 'Max bytes returned by one fetch.', atLeast(1024)),

  // Replication
  def('replica.lag.time.max.ms', 'long', '30000', 'A follower not caught up for this long leaves the ISR.'),
  // Follower side (issue 12): the replica fetchers of cluster mode.
  def(
    'num.replica.fetchers',
    'int',
    '1',
    'Replica fetchers (one connection each) per source broker; partitions are spread over them by topic and partition.',
    atLeast(1),
  ),
  def('replica.fetch.max.bytes', 'int', '1048576', 'Bytes per partition in a replica fetch (a larger first batch still comes whole).', atLeast(0)),
  def('replica.fetch.response.max.bytes', 'int', '10485760', 'Bytes in a whole replica fetch response (a larger first batch still comes whole).', atLeast(0)),
  def('replica.fetch.min.bytes', 'int', '1', 'Minimum bytes for a replica fetch response.', atLeast(0)),
  def('replica.fetch.wait.max.ms', 'int', '500', 'Max wait of a replica fetch; at most replica.socket.timeout.ms.', atLeast(0)),
  def('replica.fetch.backoff.ms', 'int', '1000', 'Backoff after a replica fetch error or a lost connection to the leader.', atLeast(0)),
  def('replica.socket.timeout.ms', 'int', '30000', 'Connect and request timeout of replica fetches (a fetch also gets replica.fetch.wait.max.ms).', atLeast(1)),
  def('replica.high.watermark.checkpoint.interval.ms', 'long', '5000', 'How often high watermarks are saved.'),
  def('unclean.leader.election.enable', 'boolean', 'false', 'Allow out-of-sync replicas to become leader.'),
  def('auto.leader.rebalance.enable', 'boolean', 'true', 'Move leadership back to preferred replicas.'),
  def('leader.imbalance.check.interval.seconds', 'long', '300', 'How often leader balance is checked.', atLeast(1)),
  def(
    'leader.imbalance.per.broker.percentage',
    'int',
    '10',
    "Share (percent) of a broker's preferred partitions led elsewhere that triggers a rebalance (cluster mode).",
    atLeast(0),
  ),
  def('controlled.shutdown.enable', 'boolean', 'true', 'Move leadership away before shutting down.'),
  def('controlled.shutdown.max.retries', 'int', '3', 'Attempts of a controlled shutdown.'),
  def('controlled.shutdown.retry.backoff.ms', 'long', '5000', 'Backoff between controlled shutdown attempts.'),

  // Groups and offsets
  def('offsets.topic.num.partitions', 'int', '50', 'Partitions of __consumer_offsets.', atLeast(1)),
  def(
    'offsets.topic.replication.factor',
    'short',
    '3',
    'Replication of __consumer_offsets. Embedded mode caps it to the one broker; in cluster mode (as Kafka) the topic is not created, and FindCoordinator answers COORDINATOR_NOT_AVAILABLE, until this many brokers are live.',
    atLeast(1),
  ),
  def('offsets.topic.segment.bytes', 'int', '104857600', 'Segment size of __consumer_offsets.', atLeast(1)),
  def('offsets.retention.minutes', 'int', '10080', 'Committed offsets of empty groups expire after this.', atLeast(1)),
  def('offsets.retention.check.interval.ms', 'long', '600000', 'How often stale offsets are removed.', atLeast(1)),
  def('offsets.commit.timeout.ms', 'int', '5000', 'Max wait for an offset commit to be replicated.', atLeast(1)),
  def('offsets.load.buffer.size', 'int', '5242880', 'Read size when loading offsets.', { ...atLeast(1), ...NO_EFFECT }),
  def('offset.metadata.max.bytes', 'int', '4096', 'Max size of commit metadata.'),
  def('group.initial.rebalance.delay.ms', 'int', '3000', 'Wait for more members before the first rebalance of a group.'),
  def('group.min.session.timeout.ms', 'int', '6000', 'Smallest session timeout a member may ask for.'),
  def('group.max.session.timeout.ms', 'int', '1800000', 'Largest session timeout a member may ask for.'),
  def('group.max.size', 'int', INT_MAX, 'Max members of one consumer group.', atLeast(1)),

  // Transactions and producer ids
  def('transactional.id.expiration.ms', 'int', '604800000', 'Idle transactional ids expire after this.', atLeast(1)),
  def('transaction.max.timeout.ms', 'int', '900000', 'Largest transaction timeout a producer may ask for.', atLeast(1)),
  def('transaction.state.log.num.partitions', 'int', '50', 'Partitions of __transaction_state.', atLeast(1)),
  def(
    'transaction.state.log.replication.factor',
    'short',
    '3',
    'Replication of __transaction_state. Embedded mode caps it to the one broker; in cluster mode (as Kafka) it waits until this many brokers are live (COORDINATOR_NOT_AVAILABLE meanwhile).',
    atLeast(1),
  ),
  def('transaction.state.log.min.isr', 'int', '2', 'min.insync.replicas of __transaction_state (capped likewise).', atLeast(1)),
  def('transaction.state.log.segment.bytes', 'int', '104857600', 'Segment size of __transaction_state.', atLeast(1)),
  def('transaction.abort.timed.out.transaction.cleanup.interval.ms', 'int', '10000', 'How often timed-out transactions are aborted.', atLeast(1)),
  def(
    'transaction.remove.expired.transaction.cleanup.interval.ms',
    'int',
    '3600000',
    'How often transactional ids idle for transactional.id.expiration.ms are removed.',
    atLeast(1),
  ),
  def('producer.id.expiration.ms', 'int', '86400000', 'Idle producer ids expire after this.', atLeast(1)),
  def('transaction.partition.verification.enable', 'boolean', 'true', 'Verify a partition is in the transaction before a transactional append.', NO_EFFECT),

  // ACLs (issue 15, src/security/authorizer): off unless authorizer.class.name names one of Kafka's authorizers.
  def(
    'authorizer.class.name',
    'string',
    '',
    "Kafka's kafka.security.authorizer.AclAuthorizer or org.apache.kafka.metadata.authorizer.StandardAuthorizer enables ACLs; empty = no authorizer (everything allowed).",
    { validator: { oneOf: ['', 'kafka.security.authorizer.AclAuthorizer', 'org.apache.kafka.metadata.authorizer.StandardAuthorizer'] } },
  ),
  def('super.users', 'string', null, 'Semicolon-separated principals (User:admin;User:broker) allowed everything when an authorizer is set.'),
  def('allow.everyone.if.no.acl.found', 'boolean', 'false', 'With an authorizer: allow a request on a resource that has no ACL at all.'),
  // Client quotas (issue 15): the windows rates are measured over (quotas themselves are client entity configs).
  def('quota.window.num', 'int', '11', 'Number of samples a client quota rate is measured over.', atLeast(1)),
  def('quota.window.size.seconds', 'int', '1', 'Length of each client quota sample.', atLeast(1)),
  def('client.quota.callback.class', 'class', null, "Custom quota callback; Fjord has only Kafka's default (user/client-id entities).", NO_EFFECT),

  // Keys Kafka 3.9 lets AlterConfigs change on a broker (DynamicBrokerConfig) that Fjord does not
  // act on yet: accepted, validated by type, stored and described, so tools and client tests that
  // set them work. Security (SSL/SASL) keys also take the per-listener form
  // listener.name.<listener>.<key> (and listener.name.<listener>.<mechanism>.<key> for SASL
  // mechanism keys); Fjord serves PLAINTEXT only.
  def(
    'max.connection.creation.rate',
    'int',
    INT_MAX,
    'Max new connections per second on the broker (inter-broker listener exempt) or, as listener.name.<l>.max.connection.creation.rate, on a listener; new connections wait. Dynamic.',
    atLeast(0),
  ),
  def('max.connections.per.ip.overrides', 'string', '', 'Per-IP or hostname overrides of max.connections.per.ip (host:count,...). Dynamic.'),
  def(
    'principal.builder.class',
    'class',
    'org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder',
    'Builds the principal of a connection.',
    NO_EFFECT,
  ),
  def('metric.reporters', 'list', '', 'Metric reporter classes.', NO_EFFECT),
  def(
    'ssl.protocol',
    'string',
    'TLSv1.3',
    'TLS protocol of the SSL context: TLSv1.2 caps the listener at TLS 1.2; TLSv1.3 (or TLS) allows every enabled protocol.',
    { validator: { oneOf: ['TLS', 'TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'] } },
  ),
  def('ssl.provider', 'string', null, 'Security provider of the SSL context.', NO_EFFECT),
  def('ssl.cipher.suites', 'list', '', "Enabled cipher suites (IANA names as Kafka, or OpenSSL names); empty = Node's defaults."),
  def('ssl.enabled.protocols', 'list', 'TLSv1.2,TLSv1.3', 'Enabled TLS protocols (TLSv1.2, TLSv1.3; TLSv1 and TLSv1.1 also accepted).'),
  def('ssl.keystore.type', 'string', 'JKS', "Key store format: PEM or PKCS12 (JKS is refused at start-up; Kafka's default name is kept).", {
    validator: { oneOf: ['JKS', 'PKCS12', 'PEM', 'jks', 'pkcs12', 'pem'] },
  }),
  def('ssl.keystore.location', 'string', null, 'Key store file: with PEM one file holding the private key and the certificate chain; or a PKCS12 file.'),
  def('ssl.keystore.password', 'password', null, 'Password of a PKCS12 key store.', { sensitive: true }),
  def('ssl.keystore.key', 'password', null, 'Private key in PEM form (ssl.keystore.type=PEM), instead of ssl.keystore.location.', { sensitive: true }),
  def('ssl.keystore.certificate.chain', 'password', null, 'Certificate chain in PEM form (ssl.keystore.type=PEM), with ssl.keystore.key.', { sensitive: true }),
  def('ssl.key.password', 'password', null, 'Password of an encrypted PEM private key (or of the key in a PKCS12 store).', { sensitive: true }),
  def('ssl.truststore.type', 'string', 'JKS', 'Trust store format: PEM (JKS and PKCS12 are refused when a trust store is set).', {
    validator: { oneOf: ['JKS', 'PKCS12', 'PEM', 'jks', 'pkcs12', 'pem'] },
  }),
  def('ssl.truststore.location', 'string', null, 'PEM file of the CA certificates that client certificates (and, as a client, brokers) are checked against.'),
  def('ssl.truststore.password', 'password', null, 'Trust store password (not used by PEM trust stores).', { ...NO_EFFECT, sensitive: true }),
  def('ssl.truststore.certificates', 'password', null, 'Trusted certificates in PEM form, instead of ssl.truststore.location.', { sensitive: true }),
  def('ssl.keymanager.algorithm', 'string', 'SunX509', 'Key manager factory algorithm.', NO_EFFECT),
  def('ssl.trustmanager.algorithm', 'string', 'PKIX', 'Trust manager factory algorithm.', NO_EFFECT),
  def(
    'ssl.endpoint.identification.algorithm',
    'string',
    'https',
    "As a client of another broker's TLS listener: https checks its host name against its certificate; empty does not.",
  ),
  def('ssl.secure.random.implementation', 'string', null, 'SecureRandom implementation.', NO_EFFECT),
  def('ssl.client.auth', 'string', 'none', 'Client certificates on TLS listeners: required, requested (checked when given) or none.', {
    validator: { oneOf: ['required', 'requested', 'none'] },
  }),
  def(
    'ssl.principal.mapping.rules',
    'string',
    'DEFAULT',
    "Rules (RULE:pattern/replacement/[LU], DEFAULT) mapping a client certificate's RFC 2253 subject to the principal name.",
  ),
  def('ssl.engine.factory.class', 'class', null, 'Custom SSLEngine factory.', NO_EFFECT),
  def('sasl.login.class', 'class', null, 'Login class of SASL.', NO_EFFECT),
  def('sasl.login.callback.handler.class', 'class', null, 'Login callback handler of SASL.', NO_EFFECT),
  def('sasl.server.callback.handler.class', 'class', null, 'Server callback handler of SASL.', NO_EFFECT),
  def('sasl.kerberos.service.name', 'string', null, 'Kerberos principal name Kafka runs as.', NO_EFFECT),
  def('sasl.kerberos.kinit.cmd', 'string', '/usr/bin/kinit', 'Kerberos kinit command path.', NO_EFFECT),
  def('sasl.kerberos.ticket.renew.window.factor', 'double', '0.8', 'Renew the Kerberos ticket after this fraction of its lifetime.', NO_EFFECT),
  def('sasl.kerberos.ticket.renew.jitter', 'double', '0.05', 'Random jitter added to the renewal time.', NO_EFFECT),
  def('sasl.kerberos.min.time.before.relogin', 'long', '60000', 'Login thread sleep time between refresh attempts.', NO_EFFECT),
  def('sasl.kerberos.principal.to.local.rules', 'list', 'DEFAULT', 'Rules mapping principal names to short names.', NO_EFFECT),
  def('sasl.login.refresh.window.factor', 'double', '0.8', 'Refresh the login credential after this fraction of its lifetime.', {
    ...NO_EFFECT,
    validator: { min: 0.5, max: 1 },
  }),
  def('sasl.login.refresh.window.jitter', 'double', '0.05', 'Random jitter added to the refresh time.', { ...NO_EFFECT, validator: { min: 0, max: 0.25 } }),
  def('sasl.login.refresh.min.period.seconds', 'short', '60', 'Minimum wait before refreshing a login credential.', {
    ...NO_EFFECT,
    validator: { min: 0, max: 900 },
  }),
  def('sasl.login.refresh.buffer.seconds', 'short', '300', 'Buffer time before credential expiry when refreshing.', {
    ...NO_EFFECT,
    validator: { min: 0, max: 3600 },
  }),
  def('log.cleaner.dedupe.buffer.size', 'long', '134217728', 'Memory of all cleaner threads for deduplication.', NO_EFFECT),
  def('log.cleaner.io.buffer.load.factor', 'double', '0.9', "Load factor of the cleaner's dedupe buffer.", NO_EFFECT),
  def('log.cleaner.io.buffer.size', 'int', '524288', 'Memory of all cleaner threads for I/O buffers.', { ...atLeast(0), ...NO_EFFECT }),
  def('log.cleaner.io.max.bytes.per.second', 'double', '1.7976931348623157E308', 'I/O throttle of the log cleaner.', NO_EFFECT),
  def('compression.gzip.level', 'int', '-1', 'gzip level for broker-side compression.', NO_EFFECT),
  def('compression.lz4.level', 'int', '9', 'lz4 level for broker-side compression.', NO_EFFECT),
  def('compression.zstd.level', 'int', '3', 'zstd level for broker-side compression.', NO_EFFECT),
  def('log.message.timestamp.before.max.ms', 'long', LONG_MAX, 'Max age of a record timestamp behind the broker time.', { ...atLeast(0), ...NO_EFFECT }),
  def('log.message.timestamp.after.max.ms', 'long', LONG_MAX, 'Max lead of a record timestamp ahead of the broker time.', { ...atLeast(0), ...NO_EFFECT }),
  def('log.local.retention.ms', 'long', '-2', 'Local retention with tiered storage (-2: log.retention.ms).', NO_EFFECT),
  def('log.local.retention.bytes', 'long', '-2', 'Local retention bytes with tiered storage (-2: log.retention.bytes).', NO_EFFECT),
  def('remote.log.index.file.cache.total.size.bytes', 'long', '1073741824', 'Cache of remote log index files.', NO_EFFECT),
  def('remote.fetch.max.wait.ms', 'int', '500', 'Max wait of a remote fetch.', NO_EFFECT),
  def('remote.log.manager.copy.max.bytes.per.second', 'long', LONG_MAX, 'Throttle of copies to remote storage.', NO_EFFECT),
  def('remote.log.manager.fetch.max.bytes.per.second', 'long', LONG_MAX, 'Throttle of reads from remote storage.', NO_EFFECT),
];

const DEFS_BY_NAME = new Map(BROKER_CONFIG_DEFS.map((d) => [d.name, d]));

export function configDef(name: string): ConfigDef | undefined {
  return DEFS_BY_NAME.get(name);
}
