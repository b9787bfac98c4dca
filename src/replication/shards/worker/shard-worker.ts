/**
 * A shard worker thread's entry (started by WorkerShards from dist/, or under tsx in tests):
 * opens the ShardHost for the partitions workerData assigns it, says 'ready', then handles the
 * main thread's messages in arrival order. Messages come in batches both ways (one per turn of
 * the sender's loop, coalesced-posts.ts). An error thrown out of a handler ends the thread;
 * the main thread sees the exit and fails this shard's pending calls.
 */
import { parentPort, workerData } from 'node:worker_threads';
import pino from 'pino';
import { ShardHost } from './shard-host.js';
import { CheckpointHandover } from './checkpoint-handover.js';
import type { CheckpointWritten, FromShard, MainAnswer, ShardInit, ToShard } from './shard-protocol.js';
import { MainAsks } from './main-asks.js';
import { workerClusterHooks } from './cluster-hooks.js';
import { CoalescedPosts } from './coalesced-posts.js';
import { messageOf } from '../../../common/errors.js';

const init = workerData as ShardInit & { logLevel?: string };
const port = parentPort;
if (!port) throw new Error('shard-worker.ts runs as a worker thread');
const logger = pino({ name: `shard-${init.index}`, level: init.logLevel ?? 'warn' }, pino.destination({ fd: 2, sync: true }));
// Answers ready in one turn go to the main thread as one message, waking it once (coalesced-posts.ts).
const posts = new CoalescedPosts<FromShard>(
  (batch, transfer) => port.postMessage(batch, transfer),
  (m, err) => {
    // An answer that cannot be cloned: its caller hears why instead (as a throwing post did before).
    if ('id' in m) port.postMessage([{ type: 'failed', id: m.id, message: `cannot answer: ${messageOf(err)}` }]);
    else throw err;
  },
);
const post = (m: FromShard, transfer: ArrayBuffer[] = []): void => posts.post(m, transfer);

// Listening before the logs open: the answers to checkpoint reports reach the hand-over while
// they do (the LogManager awaits its first write); anything else waits for the host. The main
// thread's messages of one turn arrive together, handled in order.
const handover = new CheckpointHandover(post);
// Cluster mode: what this worker asks the main thread (ISR writes, the test interceptor); answered in any state.
const asks = new MainAsks(post);
let host: ShardHost | undefined;
const early: ToShard[] = [];
port.on('message', (batch: (ToShard | CheckpointWritten | MainAnswer)[]) => {
  for (const m of batch) {
    if (m.type === 'crash' && m.how === 'heap') exhaustHeap();
    if (m.type === 'crash') throw new Error('shard worker crash requested');
    if (m.type === 'stall') Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, m.ms);
    if (m.type === 'checkpointed') handover.written(m.dir, m.written);
    else if (m.type === 'told') asks.told(m);
    else if (host) void host.handle(m);
    else early.push(m);
  }
});
host = await ShardHost.open(init, logger, post, false, handover, init.cluster ? workerClusterHooks(init.cluster, asks) : undefined);
for (const m of early.splice(0)) void host.handle(m);
post({ type: 'ready' });

/** Tests (the 'crash' message's 'heap'): keeps allocating until V8 reaches the worker's heap limit and Node ends the worker. */
function exhaustHeap(): void {
  const kept: number[][] = [];
  for (;;) kept.push(new Array<number>(1 << 20).fill(kept.length));
}
