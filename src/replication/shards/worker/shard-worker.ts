/**
 * A shard worker thread's entry (started by WorkerShards from dist/, or under tsx in tests):
 * opens the ShardHost for the partitions workerData assigns it, says 'ready', then handles the
 * main thread's messages in arrival order. An error thrown out of a handler ends the thread;
 * the main thread sees the exit and fails this shard's pending calls.
 */
import { parentPort, workerData } from 'node:worker_threads';
import pino from 'pino';
import { ShardHost } from './shard-host.js';
import { CheckpointHandover } from './checkpoint-handover.js';
import type { CheckpointWritten, FromShard, ShardInit, ToShard } from './shard-protocol.js';

const init = workerData as ShardInit & { logLevel?: string };
const port = parentPort;
if (!port) throw new Error('shard-worker.ts runs as a worker thread');
const logger = pino({ name: `shard-${init.index}`, level: init.logLevel ?? 'warn' }, pino.destination({ fd: 2, sync: true }));
const post = (m: FromShard, transfer: ArrayBuffer[] = []): void => port.postMessage(m, transfer);

// Listening before the logs open: the answers to checkpoint reports reach the hand-over while
// they do (the LogManager awaits its first write); anything else waits for the host.
const handover = new CheckpointHandover(post);
let host: ShardHost | undefined;
const early: ToShard[] = [];
port.on('message', (m: ToShard | CheckpointWritten) => {
  if (m.type === 'crash') throw new Error('shard worker crash requested');
  if (m.type === 'checkpointed') handover.written(m.dir, m.written);
  else if (host) void host.handle(m);
  else early.push(m);
});
host = await ShardHost.open(init, logger, post, false, handover);
for (const m of early.splice(0)) void host.handle(m);
post({ type: 'ready' });
