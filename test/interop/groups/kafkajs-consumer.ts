/**
 * A kafkajs group consumer for crash tests. argv: bootstrap topic groupId delayMs [sessionTimeoutMs,
 * default 6000: a shorter one also fetches with a short wait, so heartbeats keep up].
 * Prints "<partition> <offset>\n" per message with a synchronous write (so a SIGKILL loses
 * nothing already printed) before the message counts as processed (and becomes committable).
 */
import { writeSync } from 'node:fs';
import { Kafka, logLevel } from 'kafkajs';

const [bootstrap, topic, groupId, delay, session = '6000'] = process.argv.slice(2) as [string, string, string, string, string?];
const sessionTimeout = Number(session);
const kafka = new Kafka({
  brokers: [bootstrap],
  logLevel: logLevel.NOTHING,
  clientId: 'crash-test',
  retry: { retries: 100, initialRetryTime: 100, maxRetryTime: 1000 },
});
const consumer = kafka.consumer({
  groupId,
  sessionTimeout,
  heartbeatInterval: 500,
  ...(sessionTimeout < 6000 ? { maxWaitTimeInMs: 100 } : {}),
  retry: { retries: 100, initialRetryTime: 100, maxRetryTime: 1000 },
});
await consumer.connect();
await consumer.subscribe({ topic, fromBeginning: true });
const delayMs = Number(delay);
await consumer.run({
  autoCommitInterval: 100,
  eachMessage: async ({ partition, message }) => {
    writeSync(1, `${partition} ${message.offset}\n`);
    if (delayMs > 0) await new Promise((r) => setTimeout(r, delayMs));
  },
});
process.on('SIGTERM', () => void consumer.disconnect().then(() => process.exit(0)));
