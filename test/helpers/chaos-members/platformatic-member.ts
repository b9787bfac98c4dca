/**
 * A member of a KIP-848 group on @platformatic/kafka 2.12 (`groupProtocol: 'consumer'`), in its
 * own process so that the chaos harness (chaos.ts) can kill it -9. Arguments: bootstrap, group
 * id, topic. Writes the same JSON lines as fjord-member.ts: `own` (its partitions, each time
 * they change, timed on CLOCK_MONOTONIC) and `rec` (records consumed, before their commit).
 *
 * Its commits and ownership reports come from ../platformatic-commits.ts: the client has no
 * rebalance listener, and left to itself it moves committed offsets back (see there).
 */
import '../promise-with-resolvers.js';
import { hrtime } from 'node:process';
import { Consumer, stringDeserializers } from '@platformatic/kafka';
import { forwardCommits } from '../platformatic-commits.js';

const [bootstrap, groupId, topic] = process.argv.slice(2) as [string, string, string];
const consumer = new Consumer({
  groupId,
  clientId: `chaos-platformatic-${process.pid}`,
  bootstrapBrokers: [bootstrap],
  deserializers: stringDeserializers,
  maxWaitTime: 100,
  groupProtocol: 'consumer',
});

// The ownership is reported as it is applied (before the heartbeat acknowledging it).
const commits = forwardCommits(consumer, topic, (owned) => {
  process.stdout.write(`${JSON.stringify({ e: 'own', ts: String(hrtime.bigint()), p: owned })}\n`);
});

const stream = await consumer.consume({ topics: [topic], mode: 'committed', fallbackMode: 'earliest', autocommit: false });
process.stdout.write(`${JSON.stringify({ e: 'ready' })}\n`);
// Each record is handled as the stream pushes it ('data', not `for await`): no backlog builds up
// in the stream's buffer, to be handled (and committed) after the partition has moved.
stream.on('data', (m) => {
  // A record of a partition no longer assigned here (fetched before the revocation) is left to
  // its new owner, as Java's consumer drops it: neither processed nor committed.
  if (!commits.owns(m.partition)) return;
  process.stdout.write(`${JSON.stringify({ e: 'rec', r: [[m.partition, String(m.offset), m.value]] })}\n`);
  commits.commit(m);
});
stream.on('error', (err: Error) => {
  process.stderr.write(`stream failed: ${err.message}\n`);
  process.exit(1);
});
