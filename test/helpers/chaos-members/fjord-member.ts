/**
 * A member of a KIP-848 group on Fjord's own client (`group.protocol=consumer`), in its own
 * process so that the chaos harness (chaos.ts) can kill it -9. Arguments: bootstrap, group id,
 * topic. Writes JSON lines on stdout (a pipe: synchronous on Linux, so a line written is a line
 * the harness gets even if the process is killed the next instant):
 * - `{"e":"own","ts":"<ns>","p":[...]}` each time the partitions it owns change, with the time on
 *   CLOCK_MONOTONIC (shared by every process of the machine). Written from the rebalance
 *   listener, before the heartbeat that tells the coordinator a revocation is done.
 * - `{"e":"rec","r":[[partition,"offset","value"],...]}` per batch polled, before its offsets are
 *   committed (auto-commit, and the commit of the revoked partitions): a kill between the two
 *   redelivers, never loses.
 * Records are not filtered by ownership here: one of a partition the member does not own is the
 * client's bug, and the harness flags it.
 */
import { hrtime } from 'node:process';
import { Consumer } from '../../../src/client/index.js';

const [bootstrap, groupId, topic] = process.argv.slice(2) as [string, string, string];
const consumer = new Consumer({
  bootstrapServers: bootstrap,
  clientId: `chaos-fjord-${process.pid}`,
  groupId,
  groupProtocol: 'consumer',
  autoOffsetReset: 'earliest',
  autoCommitIntervalMs: 200,
  fetchMaxWaitMs: 100,
});

let reported = '';
const report = () => {
  const owned = consumer
    .assignment()
    .filter((tp) => tp.topic === topic)
    .map((tp) => tp.partition)
    .sort((a, b) => a - b);
  const now = owned.join(',');
  if (now === reported) return;
  reported = now;
  process.stdout.write(`${JSON.stringify({ e: 'own', ts: String(hrtime.bigint()), p: owned })}\n`);
};
consumer.subscribe([topic], { onPartitionsRevoked: report, onPartitionsAssigned: report });
process.stdout.write(`${JSON.stringify({ e: 'ready' })}\n`);
for (;;) {
  const records = await consumer.poll(500);
  if (records.length === 0) continue;
  const r = records.map((rec) => [rec.partition, String(rec.offset), rec.value?.toString() ?? '']);
  process.stdout.write(`${JSON.stringify({ e: 'rec', r })}\n`);
}
