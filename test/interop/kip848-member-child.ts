/**
 * A @platformatic/kafka consumer of the KIP-848 protocol in its own process, so a test can kill
 * it (SIGKILL: no leave, its session must time out). Prints one JSON line per record consumed
 * (before committing it; commits only forward: test/helpers/platformatic-commits.ts). Arguments:
 * bootstrap, group id, topic.
 */
import '../helpers/promise-with-resolvers.js';
import { Consumer, stringDeserializers } from '@platformatic/kafka';
import { forwardCommits } from '../helpers/platformatic-commits.js';

const [bootstrap, groupId, topic] = process.argv.slice(2) as [string, string, string];
const consumer = new Consumer({
  groupId,
  clientId: 'kip848-child',
  bootstrapBrokers: [bootstrap],
  deserializers: stringDeserializers,
  maxWaitTime: 100,
  groupProtocol: 'consumer',
});
const commits = forwardCommits(consumer, topic);
const stream = await consumer.consume({ topics: [topic], mode: 'committed', fallbackMode: 'earliest', autocommit: false });
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
for await (const m of stream) {
  // A record of a partition no longer assigned here is left to its new owner (see the test).
  if (!commits.owns(m.partition)) continue;
  // Processed (reported) before committed: a kill between the two redelivers, never loses.
  process.stdout.write(`${JSON.stringify({ partition: m.partition, offset: String(m.offset), value: m.value })}\n`);
  commits.commit(m);
}
