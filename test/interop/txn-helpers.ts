/**
 * What the transaction tests with real clients share (single broker and cluster alike): a child
 * process whose stdout lines are collected as they arrive, topic creation, the last stable offset
 * against the high watermark per partition (ListOffsets isolation 1 and 0, each partition asked
 * of its leader), and the confluent-kafka workloads: a transactional producer loop and a producer
 * that leaves its transaction open.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Kafka, logLevel } from 'kafkajs';
import { PYTHON } from '../helpers/peers.js';
import { RawClient } from '../helpers/raw-client.js';
import { ListOffsetsRequestCodec, ListOffsetsResponseCodec } from '../../src/protocol/messages/index.js';

/** A child process whose stdout lines are collected as they arrive. */
export class Lines {
  readonly child: ChildProcess;
  readonly lines: string[] = [];
  stderr = '';
  exited = false;
  private buf = '';
  constructor(cmd: string, args: string[]) {
    this.child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout!.on('data', (d: Buffer) => {
      this.buf += d.toString();
      const parts = this.buf.split('\n');
      this.buf = parts.pop()!;
      this.lines.push(...parts);
    });
    this.child.stderr!.on('data', (d: Buffer) => (this.stderr = (this.stderr + d.toString()).slice(-4000)));
    this.child.on('exit', () => (this.exited = true));
  }
  async until(pred: (lines: string[]) => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pred(this.lines)) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; lines: ${this.lines.slice(-10).join(' | ')}; stderr: ${this.stderr}`);
      if (this.exited) throw new Error(`process exited while waiting for ${what}; lines: ${this.lines.slice(-10).join(' | ')}; stderr: ${this.stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  /** Resolves with the exit code once the process has ended by itself (rejects after the deadline). */
  async exit(timeoutMs: number, what: string): Promise<number | null> {
    if (!this.exited) {
      const timer = new Promise<never>((_, reject) =>
        setTimeout(
          () => reject(new Error(`timed out waiting for ${what}; lines: ${this.lines.slice(-10).join(' | ')}; stderr: ${this.stderr}`)),
          timeoutMs,
        ).unref(),
      );
      await Promise.race([once(this.child, 'exit'), timer]);
    }
    return this.child.exitCode;
  }
  async kill(): Promise<void> {
    if (this.exited) return;
    const done = once(this.child, 'exit');
    this.child.kill('SIGKILL');
    await done;
  }
}

export interface TopicOptions {
  replicationFactor?: number;
  configs?: Record<string, string>;
}

export async function createTopic(bootstrap: string, topic: string, partitions: number, opts: TopicOptions = {}): Promise<void> {
  const kafka = new Kafka({ brokers: bootstrap.split(','), logLevel: logLevel.NOTHING, retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 } });
  const admin = kafka.admin();
  await admin.connect();
  try {
    await admin.createTopics({
      topics: [
        {
          topic,
          numPartitions: partitions,
          ...(opts.replicationFactor ? { replicationFactor: opts.replicationFactor } : {}),
          configEntries: Object.entries(opts.configs ?? {}).map(([name, value]) => ({ name, value })),
        },
      ],
      waitForLeaders: true,
    });
  } finally {
    await admin.disconnect();
  }
}

/** The port that answers for a partition: one broker's, or each partition's leader's. */
export type PortOf = number | ((partition: number) => number | Promise<number>);

/** ListOffsets latest per partition, read_committed (the LSO) or read_uncommitted (the high watermark). */
export async function latestOffsets(portOf: PortOf, topic: string, partitions: number, committed: boolean): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < partitions; i++) {
    const port = typeof portOf === 'number' ? portOf : await portOf(i);
    const c = await RawClient.connect(port);
    try {
      const r = await c.request(2, ListOffsetsRequestCodec, ListOffsetsResponseCodec, 7, {
        replicaId: -1,
        isolationLevel: committed ? 1 : 0,
        topics: [{ name: topic, partitions: [{ partitionIndex: i, timestamp: -1n, currentLeaderEpoch: -1 }] }],
      });
      const p = r.topics[0]!.partitions[0]!;
      assert.equal(p.errorCode, 0, `ListOffsets ${topic}-${i} (isolation ${committed ? 1 : 0})`);
      out.push(Number(p.offset));
    } finally {
      c.socket.destroy();
    }
  }
  return out;
}

/** Polls until the LSO equals the high watermark on every partition; returns how long it took. */
export async function waitStable(portOf: PortOf, topic: string, partitions: number, boundMs: number): Promise<number> {
  const start = Date.now();
  let last = '';
  while (Date.now() - start < boundMs) {
    try {
      const [lso, hw] = [await latestOffsets(portOf, topic, partitions, true), await latestOffsets(portOf, topic, partitions, false)];
      last = `lso ${lso.join(',')} hw ${hw.join(',')}`;
      if (lso.every((o, i) => o === hw[i])) return Date.now() - start;
    } catch (e) {
      last = String(e);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the last stable offset did not reach the log end in ${boundMs} ms: ${last}`);
}

/**
 * A transactional.id that leaves its transaction open: five records over two partitions (or
 * argv[5] partitions), flushed, then the process waits to be killed. argv: bootstrap, topic,
 * transaction.timeout.ms, [transactional.id], [partitions]. Values hang-0..hang-4.
 */
export const HANG = `
import sys, time
from confluent_kafka import Producer
bootstrap, topic, timeout = sys.argv[1], sys.argv[2], int(sys.argv[3])
tid = sys.argv[4] if len(sys.argv) > 4 else 'hang-tx'
parts = int(sys.argv[5]) if len(sys.argv) > 5 else 2
p = Producer({'bootstrap.servers': bootstrap, 'transactional.id': tid, 'transaction.timeout.ms': timeout})
p.init_transactions(60)
p.begin_transaction()
for i in range(5): p.produce(topic, value=('hang-%d' % i).encode(), partition=i % parts)
p.flush(30)
print('FLUSHED', flush=True)
time.sleep(600)
`;

/**
 * A transactional producer in a loop. argv: bootstrap, topic, records per transaction,
 * transactional.id, then optional: partitions (2), abort every Nth transaction on purpose (0:
 * never), hold ms (0), a stop file (''), a value tag (the transactional.id), transaction.timeout.ms
 * (5000), a consumer group (''). Transaction n writes '<tag><n>-<i>' to partition i % partitions
 * and, with a group, commits offset n of the topic's partition 0 for that group in the
 * transaction (AddOffsetsToTxn, TxnOffsetCommit), so the group's offset names the last committed
 * transaction. Lines: 'FLUSHED <tag><n>'
 * once its records are acknowledged (and its offsets sent) (it is then open; with a hold it stays open that long),
 * 'COMMITTING <tag><n>', 'COMMITTED <tag><n>', 'ROLLEDBACK <tag><n>' (aborted on purpose, after a
 * flush, so its records are in the log), 'ERROR <n> <error>' then 'ABORTED <n>' for an abortable
 * error, 'FATAL <error>' before exiting 3, 'DONE' once the stop file exists (between transactions).
 */
export const TXN_LOOP = `
import sys, os, time
from confluent_kafka import Producer, Consumer, TopicPartition, KafkaException
bootstrap, topic, per, tid = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
parts = int(sys.argv[5]) if len(sys.argv) > 5 else 2
abort_every = int(sys.argv[6]) if len(sys.argv) > 6 else 0
hold = int(sys.argv[7]) if len(sys.argv) > 7 else 0
stop = sys.argv[8] if len(sys.argv) > 8 else ''
tag = sys.argv[9] if len(sys.argv) > 9 else tid
timeout = int(sys.argv[10]) if len(sys.argv) > 10 else 5000
group = sys.argv[11] if len(sys.argv) > 11 else ''
meta = Consumer({'bootstrap.servers': bootstrap, 'group.id': group}).consumer_group_metadata() if group else None
p = Producer({'bootstrap.servers': bootstrap, 'transactional.id': tid, 'transaction.timeout.ms': timeout,
              'linger.ms': 1, 'socket.timeout.ms': 5000, 'reconnect.backoff.max.ms': 200})
p.init_transactions(60)
n = 0
while not (stop and os.path.exists(stop)):
    n += 1
    try:
        p.begin_transaction()
        for i in range(per): p.produce(topic, value=('%s%d-%d' % (tag, n, i)).encode(), partition=i % parts)
        if meta is not None: p.send_offsets_to_transaction([TopicPartition(topic, 0, n)], meta, 60)
        if hold > 0 or (abort_every > 0 and n % abort_every == 0):
            left = p.flush(60)
            if left == 0: print('FLUSHED %s%d' % (tag, n), flush=True)
            if hold > 0: time.sleep(hold / 1000.0)
        if abort_every > 0 and n % abort_every == 0:
            p.abort_transaction(60)
            print('ROLLEDBACK %s%d' % (tag, n), flush=True)
            continue
        print('COMMITTING %s%d' % (tag, n), flush=True)
        while True:
            try:
                p.commit_transaction(60)
                print('COMMITTED %s%d' % (tag, n), flush=True)
                break
            except KafkaException as e:
                if e.args[0].retriable(): continue
                raise
    except KafkaException as e:
        err = e.args[0]
        print('ERROR %d %s' % (n, err), flush=True)
        if err.txn_requires_abort():
            p.abort_transaction(60)
            print('ABORTED %d' % n, flush=True)
        else:
            print('FATAL %s' % err, flush=True)
            sys.exit(3)
print('DONE', flush=True)
`;

/** Counts of read values per transaction tag (the part of '<tag><n>-<i>' before the last '-'). */
export function byTransaction(values: readonly string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const v of values) {
    const tag = v.slice(0, v.lastIndexOf('-'));
    out.set(tag, (out.get(tag) ?? 0) + 1);
  }
  return out;
}

/** The transaction tags of the lines that start with `kind` ('COMMITTED', 'ROLLEDBACK', 'FLUSHED'...). */
export function tagsOf(lines: readonly string[], kind: string): string[] {
  return lines.filter((l) => l.startsWith(`${kind} `)).map((l) => l.split(' ')[1]!);
}

const OBSERVER = `
import sys
from confluent_kafka import Consumer, TopicPartition, OFFSET_BEGINNING
bootstrap, topic, isolation, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
c = Consumer({'bootstrap.servers': bootstrap, 'group.id': 'observe-' + isolation, 'enable.auto.commit': False,
              'isolation.level': isolation, 'fetch.wait.max.ms': 100})
c.assign([TopicPartition(topic, i, OFFSET_BEGINNING) for i in range(n)])
while True:
    for m in c.consume(500, 0.5):
        if m.error(): print('E %s' % m.error(), flush=True)
        else: print('M %s' % m.value().decode(), flush=True)
`;

/**
 * A confluent-kafka consumer reading every partition from the start for as long as it runs
 * (until killed): 'M <value>' per record as it arrives, 'E <error>' per error. What a
 * read_committed reader saw while brokers failed, to compare with the end state.
 */
export function startObserver(bootstrap: string, topic: string, isolation: 'read_committed' | 'read_uncommitted', partitions: number): Lines {
  return new Lines(PYTHON, ['-c', OBSERVER, bootstrap, topic, isolation, String(partitions)]);
}

/** The values an observer printed so far. */
export const observed = (o: Lines): string[] => o.lines.filter((l) => l.startsWith('M ')).map((l) => l.slice(2));
