/**
 * The broker settings the KIP-848 (consumer group protocol) interop tests share: heartbeats every
 * `heartbeatMs`, with the floor Kafka puts under them (group.consumer.min.heartbeat.interval.ms,
 * 5 s by default) lowered so that a rebalance settles in a fraction of a second instead of
 * several; optionally a session timeout of `sessionMs` (its 45 s floor lowered too) so that a
 * member killed -9 is fenced within seconds, and the number of offsets partitions (one puts every
 * group on the same coordinator shard).
 */
export interface Kip848Settings {
  heartbeatMs: number;
  sessionMs?: number;
  offsetsPartitions?: number;
}

export function kip848BrokerProps({ heartbeatMs, sessionMs, offsetsPartitions }: Kip848Settings): Record<string, string> {
  return {
    ...(sessionMs === undefined ? {} : { 'group.consumer.session.timeout.ms': String(sessionMs), 'group.consumer.min.session.timeout.ms': '1000' }),
    'group.consumer.heartbeat.interval.ms': String(heartbeatMs),
    'group.consumer.min.heartbeat.interval.ms': '100',
    ...(offsetsPartitions === undefined ? {} : { 'offsets.topic.num.partitions': String(offsetsPartitions) }),
  };
}
