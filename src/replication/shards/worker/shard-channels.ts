/**
 * The main thread's end of each shard: a worker thread (shards 1..N, shard-worker.ts) or, for
 * shard 0, a ShardHost on the main thread itself (the internal topics: the coordinators append
 * to them without a hand-over, docs/threads.md "Who owns what"). Both take the same messages
 * and answer the same way; shard 0's pass by reference (no clone, no transfer).
 */
import { Worker } from 'node:worker_threads';
import pino from 'pino';
import { ShardHost } from './shard-host.js';
import { CheckpointHandover } from './checkpoint-handover.js';
import type { SharedDirFiles } from './shared-dir-files.js';
import type { CheckpointWritten, FromShard, MainAnswer, ShardInit, ToShard } from './shard-protocol.js';
import { answerAsk, type MainSide } from './main-answers.js';
import type { ClusterHooks } from './cluster-hooks.js';
import { CoalescedPosts } from './coalesced-posts.js';
import { messageOf } from '../../../common/errors.js';

export interface ShardChannel {
  readonly index: number;
  alive: boolean;
  /** Calls waiting for an answer, by id: resolved with the answer, or undefined once the shard has ended. */
  readonly pending: Map<number, (m: FromShard | undefined) => void>;
  send(m: ToShard | CheckpointWritten | MainAnswer, transfer?: ArrayBuffer[]): void;
  /** Resolves once the shard has opened its logs; rejects when it ends first. */
  readonly ready: Promise<void>;
  /** After the shutdown's answer: ends the thread (a worker), and resolves once it has. */
  close(): Promise<void>;
  /** The worker thread (undefined for shard 0). */
  readonly worker?: Worker;
  /** Shard 0's host, once ready (undefined for a worker). */
  readonly host?: ShardHost;
}

export type ShardEnded = (index: number, reason: string) => void;

/** What a channel starts a shard from: the shard's init, its log level, and (workers) the heap its isolate may grow to. */
export type ChannelInit = ShardInit & { logLevel?: string; heapMb?: number };

/**
 * A worker that reaches its heap limit is ended alone by Node (ERR_WORKER_OUT_OF_MEMORY) and its
 * shard restarted like any worker that ended (worker-restart.test.ts). Its limit is the process's
 * (V8's heap flags hold for every isolate) unless `heapMb` sets one of its own.
 */
function resourceLimits(init: ChannelInit): { resourceLimits?: { maxOldGenerationSizeMb: number } } {
  return init.heapMb === undefined ? {} : { resourceLimits: { maxOldGenerationSizeMb: init.heapMb } };
}

function spawn(init: ChannelInit): Worker {
  const here = import.meta.url;
  if (here.endsWith('.ts')) {
    // Under tsx (tests, benches) the worker is TypeScript too and Node 20 does not give a worker
    // its parent's `--import tsx` hooks: register them there first (as zk-worker-backend.ts does).
    const entry = new URL('./shard-worker.ts', here).href;
    const tsx = import.meta.resolve('tsx/esm/api');
    const boot = `import(${JSON.stringify(tsx)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); })`;
    return new Worker(boot, { eval: true, workerData: init, ...resourceLimits(init) });
  }
  return new Worker(new URL('./shard-worker.js', here), { workerData: init, ...resourceLimits(init) });
}

/** What a shard says that is not an answer (ready, checkpoint entries, shutdown, a worker's asks) goes here; an answer to its call. */
function dispatch(ch: ShardChannel, files: SharedDirFiles, m: FromShard, markReady: () => void, main: MainSide = {}): void {
  if (m.type === 'ready') markReady();
  else if (m.type === 'ask') void answerAsk(m, main).then((answer) => ch.alive && ch.send(answer));
  else if (m.type === 'checkpoints') {
    // Answered once written: the shard keeps one report per directory in flight (checkpoint-handover.ts).
    void files.report(ch.index, m.dir, m.entries).then((written) => ch.alive && ch.send({ type: 'checkpointed', dir: m.dir, written }));
  } else if (m.type === 'closed') files.closed(ch.index, m.dir, m.unclean, m.checkpointed);
  else {
    const answer = ch.pending.get(m.id);
    ch.pending.delete(m.id);
    answer?.(m);
  }
}

/** Where a worker channel counts its postMessage calls each way (HandoverStats). */
export interface PostCounts {
  postsToWorkers: number;
  postsFromWorkers: number;
}

export function workerChannel(init: ChannelInit, files: SharedDirFiles, ended: ShardEnded, counts: PostCounts, main: MainSide = {}): ShardChannel {
  const worker = spawn(init);
  let markReady!: () => void;
  let failStart!: (err: Error) => void;
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  // One turn's messages to this worker wake it once (coalesced-posts.ts).
  const posts = new CoalescedPosts<ToShard | CheckpointWritten | MainAnswer>(
    (batch, transfer) => {
      worker.postMessage(batch, transfer);
      counts.postsToWorkers++;
    },
    (m, err) => {
      // Neither carries a call to fail (a checkpoint answer is plain numbers and strings: it clones).
      if (m.type === 'crash' || m.type === 'stall' || m.type === 'checkpointed' || m.type === 'told') return;
      const answer = ch.pending.get(m.id);
      ch.pending.delete(m.id);
      answer?.({ type: 'failed', id: m.id, message: `cannot send to shard worker ${init.index}: ${messageOf(err)}` });
    },
  );
  const ch: ShardChannel = {
    index: init.index,
    alive: true,
    pending: new Map(),
    worker,
    send: (m, transfer = []) => posts.post(m, transfer),
    ready: new Promise<void>((resolve, reject) => {
      markReady = resolve;
      failStart = reject;
    }),
    close: async () => {
      await worker.terminate();
      await exited;
    },
  };
  // A worker's answers come coalesced too: one message, every answer of its turn in order.
  worker.on('message', (batch: FromShard[]) => {
    counts.postsFromWorkers++;
    for (const m of batch) dispatch(ch, files, m, markReady, main);
  });
  let reason = '';
  worker.on('error', (err) => (reason = err.message));
  worker.once('exit', (code) => {
    ch.alive = false;
    const why = reason || `exit code ${code}`;
    failStart(new Error(`shard worker ${init.index} ended while opening its logs: ${why}`));
    for (const answer of ch.pending.values()) answer(undefined);
    ch.pending.clear();
    ended(init.index, why);
  });
  return ch;
}

/** Shard 0: a ShardHost on this thread; messages are handled as they are sent, answers come back by reference. */
export function localChannel(init: ChannelInit, files: SharedDirFiles, hooks?: ClusterHooks): ShardChannel {
  let host: ShardHost | undefined;
  const logger = pino({ name: `shard-${init.index}`, level: init.logLevel ?? 'warn' }, pino.destination({ fd: 2, sync: true }));
  const post = (m: FromShard): void => dispatch(ch, files, m, () => undefined);
  // The answers to checkpoint reports reach it while the host is still opening its logs.
  const handover = new CheckpointHandover(post);
  const ch: ShardChannel = {
    index: init.index,
    alive: true,
    pending: new Map(),
    // Nothing else is sent before `ready` (WorkerShards.open waits for every shard).
    // Shard 0 never asks (its hooks are the broker's own), so no 'told' comes its way.
    send: (m) => (m.type === 'checkpointed' ? handover.written(m.dir, m.written) : m.type === 'told' ? undefined : void host?.handle(m)),
    ready: ShardHost.open(init, logger, post, true, handover, hooks).then((h) => {
      host = h;
    }),
    close: () => Promise.resolve(),
    get host() {
      return host;
    },
  };
  return ch;
}
