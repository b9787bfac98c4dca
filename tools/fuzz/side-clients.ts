/**
 * A well-behaved producer and consumer that run beside the fuzzer, in their own process (so the
 * fuzzer's CPU does not count against them), built on the project's client:
 *   node --import tsx tools/fuzz/side-clients.ts <host:port> <topic> <partitions> <records/s>
 * The producer sends at a steady rate (acks=1, 200-byte values), the consumer reads everything
 * from the start. Every 250 ms one JSON line on stdout gives the cumulative counts:
 *   {"t":ms,"produced":n,"consumed":n,"errors":n,"lastError":"..."}
 */
import { Consumer, Producer } from '../../src/client/index.js';

const [bootstrap, topic, partitionsArg, rateArg] = process.argv.slice(2);
if (!bootstrap || !topic) {
  process.stderr.write('usage: side-clients <host:port> <topic> [partitions] [records/s]\n');
  process.exit(2);
}
const partitions = Number(partitionsArg ?? 3);
const rate = Number(rateArg ?? 2000);

let produced = 0;
let consumed = 0;
let errors = 0;
let lastError = '';
let stopping = false;
const t0 = Date.now();

const producer = new Producer({
  bootstrapServers: bootstrap,
  clientId: 'fuzz-side-producer',
  acks: 1,
  lingerMs: 5,
  requestTimeoutMs: 30_000,
  deliveryTimeoutMs: 60_000,
});
const consumer = new Consumer({
  bootstrapServers: bootstrap,
  clientId: 'fuzz-side-consumer',
  autoOffsetReset: 'earliest',
  fetchMaxWaitMs: 200,
  requestTimeoutMs: 30_000,
});
consumer.assign(Array.from({ length: partitions }, (_, partition) => ({ topic, partition })));

const value = Buffer.alloc(200, 'v');
let outstanding = 0;
let queued = 0;
const produceTimer = setInterval(() => {
  // paced by the clock, not by the timer's (loaded-machine) punctuality
  let due = Math.floor(((Date.now() - t0) * rate) / 1000) - queued;
  if (due > rate) {
    queued += due - rate; // more than a second behind: skip, do not burst
    due = rate;
  }
  for (let i = 0; i < due; i++) {
    if (outstanding > rate * 5) return; // the broker stopped answering; do not buffer without bound
    outstanding++;
    queued++;
    producer.produce({ topic, value, partition: queued % partitions }, (err) => {
      outstanding--;
      if (err) {
        errors++;
        lastError = err.message;
      } else produced++;
    });
  }
}, 10);

const report = setInterval(() => {
  process.stdout.write(JSON.stringify({ t: Date.now() - t0, produced, consumed, errors, lastError }) + '\n');
}, 250);

async function consumeLoop(): Promise<void> {
  while (!stopping) {
    try {
      consumed += (await consumer.poll(500)).length;
    } catch (e) {
      errors++;
      lastError = e instanceof Error ? e.message : String(e);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

const loop = consumeLoop();
const stop = (): void => {
  if (stopping) return;
  stopping = true;
  clearInterval(produceTimer);
  clearInterval(report);
  void Promise.race([Promise.all([loop, producer.close(), consumer.close()]), new Promise((r) => setTimeout(r, 3000))]).finally(() => process.exit(0));
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop); // the fuzzer went away
process.stdin.resume();
