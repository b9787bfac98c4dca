/**
 * One consumer group member for bench/rebalance-recovery.ts, in its own process so the bench can
 * kill -9 it. Prints `P <partition>` for each record it consumes (the bench times the lines).
 *
 *   node --import tsx bench/rebalance-recovery-member.ts eager|consumer <bootstrap> <group> <topic> <session ms> <heartbeat ms>
 *
 * - eager: kafkajs (classic protocol, eager rebalance, its default round-robin assignor), with the
 *   session timeout and heartbeat interval given;
 * - consumer: @platformatic/kafka 2.12 with `groupProtocol: 'consumer'` (KIP-848); its session
 *   timeout and heartbeat interval are the broker's group.consumer.* settings.
 * Both commit what they consumed (kafkajs every 500 ms, @platformatic/kafka each record).
 */
const [kind, bootstrap, group, topic, session, heartbeat] = process.argv.slice(2) as [string, string, string, string, string, string];
const say = (partition: number): void => void process.stdout.write(`P ${partition}\n`);

if (kind === 'eager') {
  const { Kafka, logLevel } = await import('kafkajs');
  const kafka = new Kafka({ clientId: 'rr-eager', brokers: [bootstrap], logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: group, sessionTimeout: Number(session), heartbeatInterval: Number(heartbeat), maxWaitTimeInMs: 100 });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: false });
  await consumer.run({ autoCommitInterval: 500, eachMessage: async ({ partition }) => say(partition) });
} else if (kind === 'consumer') {
  // @platformatic/kafka uses Promise.withResolvers, which Node 20 lacks: defined before it loads.
  await import('../test/helpers/promise-with-resolvers.js');
  const { Consumer, stringDeserializers } = await import('@platformatic/kafka');
  const consumer = new Consumer({
    groupId: group,
    clientId: 'rr-consumer',
    bootstrapBrokers: [bootstrap],
    deserializers: stringDeserializers,
    maxWaitTime: 100,
    groupProtocol: 'consumer',
  });
  const stream = await consumer.consume({ topics: [topic], mode: 'committed', fallbackMode: 'latest', autocommit: 500 });
  for await (const m of stream) {
    // Records of a partition already handed on are left to the new owner.
    if (consumer.assignments?.some((a) => a.topic === topic && a.partitions.includes(m.partition))) say(m.partition);
  }
} else {
  process.stderr.write(`unknown member kind ${kind}\n`);
  process.exit(2);
}
