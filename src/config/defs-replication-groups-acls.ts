// Broker configuration keys of replication (ISR, replica fetchers, leader balance, controlled
// shutdown), groups and offsets, transactions and producer ids, ACLs and client quota windows. One of
// the area tables that defs.ts assembles into the single list of every key.

import { def, atLeast, INT_MAX, NO_EFFECT, type ConfigDef } from './config-def.js';

export const REPLICATION_GROUPS_ACLS_DEFS: readonly ConfigDef[] = [
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
  // Offset history (issue 25): every change of a committed offset, in __consumer_offsets_history.
  def('offsets.history.enable', 'boolean', 'true', 'Record every change of a committed offset in __consumer_offsets_history.'),
  def('offsets.history.retention.ms', 'long', '604800000', 'retention.ms of __consumer_offsets_history (when it is created).', atLeast(1)),
  def(
    'offsets.history.alive.interval.ms',
    'long',
    '60000',
    'A group committing offsets that do not move gets one alive record per this interval in the offset history.',
    atLeast(1),
  ),
  def('offset.metadata.max.bytes', 'int', '4096', 'Max size of commit metadata.'),
  def('group.initial.rebalance.delay.ms', 'int', '3000', 'Wait for more members before the first rebalance of a group.'),
  def('group.min.session.timeout.ms', 'int', '6000', 'Smallest session timeout a member may ask for.'),
  def('group.max.session.timeout.ms', 'int', '1800000', 'Largest session timeout a member may ask for.'),
  def('group.max.size', 'int', INT_MAX, 'Max members of one consumer group.', atLeast(1)),
  // Consumer groups (KIP-848, Kafka 4's keys and defaults).
  def(
    'group.coordinator.rebalance.protocols',
    'list',
    'classic,consumer',
    'Group protocols served: classic (JoinGroup) and consumer (ConsumerGroupHeartbeat, KIP-848).',
    {
      validator: { oneOf: ['classic', 'consumer'] },
    },
  ),
  def('group.consumer.session.timeout.ms', 'int', '45000', 'Consumer group members not heard from for this long are removed.', atLeast(1)),
  def('group.consumer.min.session.timeout.ms', 'int', '45000', 'Smallest group.consumer.session.timeout.ms.', atLeast(1)),
  def('group.consumer.max.session.timeout.ms', 'int', '60000', 'Largest group.consumer.session.timeout.ms.', atLeast(1)),
  def('group.consumer.heartbeat.interval.ms', 'int', '5000', 'How often consumer group members are told to heartbeat.', atLeast(1)),
  def('group.consumer.min.heartbeat.interval.ms', 'int', '5000', 'Smallest group.consumer.heartbeat.interval.ms.', atLeast(1)),
  def('group.consumer.max.heartbeat.interval.ms', 'int', '15000', 'Largest group.consumer.heartbeat.interval.ms.', atLeast(1)),
  def('group.consumer.max.size', 'int', INT_MAX, 'Max members of one consumer group (KIP-848).', atLeast(1)),
  def(
    'group.consumer.assignors',
    'list',
    'org.apache.kafka.coordinator.group.assignor.UniformAssignor,org.apache.kafka.coordinator.group.assignor.RangeAssignor',
    'Server-side assignors of consumer groups (uniform, range or their class names); the first is the default.',
  ),

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
  def(
    'transaction.partition.verification.enable',
    'boolean',
    'true',
    "KIP-890: a leader asks the transaction coordinator whether a transactional producer's first batch to a partition belongs to its ongoing transaction before appending it. Dynamic.",
  ),

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
];
