/**
 * The exactly-once consume-transform-produce loop with a subscribed consumer group (issue 14,
 * KIP-447), confluent-kafka on one broker: two worker processes in one group, each with
 * consumer.subscribe([input]) (read_committed, no auto commit) and its own transactional.id;
 * each loop polls, produces the records to the output, sends the consumer's positions with its
 * group metadata (generation and member id) to the transaction and commits. Workers are killed
 * -9 at random moments and restarted, so the group rebalances and the transactions' offset
 * commits carry the generations; one worker is also frozen past its session timeout with a
 * transaction open, so it comes back as a zombie of an older generation whose TxnOffsetCommit
 * must be fenced. In the end the output read_committed holds each input record exactly once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { PYTHON, requirePeer } from '../helpers/peers.js';
import { consumeAll } from './confluent-consume.js';
import { Lines, createTopic, waitStable } from './txn-helpers.js';
import { BrokerProcess, freePort } from './groups/crash-helpers.js';

const TOTAL = 1200;
const PARTITIONS = 4;
const GROUP = 'eosg';
const IN = 'eosg-in';
const OUT = 'eosg-out';
const KILLS = 3;

/**
 * One worker. argv: bootstrap, input, output, transactional.id, group, hold ms (pause between
 * producing a batch and sending its offsets: pacing, and the moment the test freezes it).
 * Lines: 'ASSIGNED p,p' (each assignment), 'PRODUCED n' (a batch of n records produced, its
 * offsets not yet sent), 'COMMITTED n', 'DROPPED n' (a rebalance happened while polling: the
 * batch is dropped and the positions rewound to the committed offsets), 'ABORTED <error>' then
 * exit 5 (an abortable error: the test restarts it, which rewinds it), 'FATAL <error>' exit 3.
 * The group metadata is taken right after the poll: the generation the records were read in.
 */
const WORKER = `
import sys, time
from confluent_kafka import Producer, Consumer, KafkaException, TopicPartition, OFFSET_BEGINNING
bootstrap, src, dst, tid, group, hold = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6])
p = Producer({'bootstrap.servers': bootstrap, 'transactional.id': tid, 'transaction.timeout.ms': 30000, 'linger.ms': 1})
p.init_transactions(60)
c = Consumer({'bootstrap.servers': bootstrap, 'group.id': group, 'enable.auto.commit': False,
              'isolation.level': 'read_committed', 'auto.offset.reset': 'earliest',
              'session.timeout.ms': 3000, 'heartbeat.interval.ms': 300, 'max.poll.interval.ms': 30000})
changed = [False]
def on_assign(consumer, parts):
    changed[0] = True
    print('ASSIGNED %s' % ','.join(str(x.partition) for x in parts), flush=True)
def on_revoke(consumer, parts):
    changed[0] = True
def on_lost(consumer, parts):
    changed[0] = True
c.subscribe([src], on_assign=on_assign, on_revoke=on_revoke, on_lost=on_lost)

def rewind():
    asg = c.assignment()
    if not asg: return
    for tp in c.committed(asg, 30):
        c.seek(TopicPartition(tp.topic, tp.partition, tp.offset if tp.offset >= 0 else OFFSET_BEGINNING))

while True:
    changed[0] = False
    msgs = c.consume(10, 0.5)
    meta = c.consumer_group_metadata()
    for m in msgs:
        if m.error(): raise Exception(str(m.error()))
    if not msgs: continue
    if changed[0]:
        print('DROPPED %d' % len(msgs), flush=True)
        rewind()
        continue
    pos = [tp for tp in c.position(c.assignment()) if tp.offset >= 0]
    try:
        p.begin_transaction()
        for m in msgs: p.produce(dst, value=m.value(), partition=m.partition())
        p.flush(30)
        print('PRODUCED %d' % len(msgs), flush=True)
        if hold > 0: time.sleep(hold / 1000.0)
        p.send_offsets_to_transaction(pos, meta, 30)
        while True:
            try:
                p.commit_transaction(30)
                break
            except KafkaException as e:
                if e.args[0].retriable(): continue
                raise
        print('COMMITTED %d' % len(msgs), flush=True)
    except KafkaException as e:
        err = e.args[0]
        if err.txn_requires_abort():
            p.abort_transaction(30)
            print('ABORTED %s' % err, flush=True)
            c.close()
            sys.exit(5)
        print('FATAL %s' % err, flush=True)
        sys.exit(3)
`;

/** A worker slot: its transactional.id and its runs (restarted after a kill or an abort). */
class Worker {
  readonly runs: Lines[] = [];
  constructor(
    private readonly bootstrap: string,
    readonly slot: number,
    private readonly hold: number,
  ) {
    this.start();
  }
  start(): void {
    this.runs.push(new Lines(PYTHON, ['-c', WORKER, this.bootstrap, IN, OUT, `eosg-tx-${this.slot}`, GROUP, String(this.hold)]));
  }
  get current(): Lines {
    return this.runs[this.runs.length - 1]!;
  }
  get lines(): string[] {
    return this.runs.flatMap((r) => r.lines);
  }
  /** Restarts the worker if it ended by itself (after an abort, exit 5); any other exit fails the test. */
  supervise(): void {
    const r = this.current;
    if (!r.exited) return;
    assert.equal(r.child.exitCode, 5, `worker ${this.slot} ended: ${r.lines.slice(-5).join(' | ')} ${r.stderr}`);
    this.start();
  }
}

/** The records counted by lines of one kind ('COMMITTED 10' counts 10). */
const count = (lines: readonly string[], kind: string): number =>
  lines.filter((l) => l.startsWith(`${kind} `)).reduce((n, l) => n + Number(l.split(' ')[1]), 0);

/** The group's committed offsets on the input, summed: input records consumed and committed. */
async function committedInput(bootstrap: string): Promise<number> {
  const kafka = new Kafka({ brokers: [bootstrap], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const [t] = await admin.fetchOffsets({ groupId: GROUP, topics: [IN] });
    return (t?.partitions ?? []).reduce((n, p) => n + Math.max(0, Number(p.offset)), 0);
  } finally {
    await admin.disconnect();
  }
}

test('exactly-once with a subscribed group: workers killed -9 and restarted at random, one frozen into a zombie; the output read_committed holds each input once', {
  timeout: 240_000,
}, async (t) => {
  if (!requirePeer(t, 'python3-confluent-kafka')) return;
  const started = Date.now();
  const dir = await mkdtemp(join(tmpdir(), 'fjord-txn-eosg-'));
  const broker = new BrokerProcess(await freePort(), dir, {
    'transaction.state.log.num.partitions': '3',
    'offsets.topic.num.partitions': '3',
    'transaction.abort.timed.out.transaction.cleanup.interval.ms': '500',
    'group.initial.rebalance.delay.ms': '0',
    // Each kill -9 and the freeze wait out a session timeout: 3 s, not Kafka's minimum 6 s.
    'group.min.session.timeout.ms': '3000',
  });
  const workers: Worker[] = [];
  const paused = new Set<Worker>();
  try {
    await broker.start();
    await createTopic(broker.bootstrap, IN, PARTITIONS);
    await createTopic(broker.bootstrap, OUT, PARTITIONS);
    const kafka = new Kafka({ brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: IN, acks: -1, messages: Array.from({ length: TOTAL }, (_, i) => ({ value: `v${i}`, partition: i % PARTITIONS })) });
    await producer.disconnect();

    workers.push(new Worker(broker.bootstrap, 0, 100), new Worker(broker.bootstrap, 1, 100));
    const all = (): string[] => workers.flatMap((w) => w.lines);
    /** Waits for `pred`, restarting workers that ended by themselves (not a paused one). */
    const until = async (pred: () => boolean | Promise<boolean>, timeoutMs: number, what: string): Promise<void> => {
      const deadline = Date.now() + timeoutMs;
      while (!(await pred())) {
        if (Date.now() > deadline) {
          throw new Error(
            `timed out waiting for ${what}; ${workers.map((w) => `worker ${w.slot}: ${w.lines.slice(-6).join(' | ')} ${w.current.stderr.slice(-500)}`).join('; ')}`,
          );
        }
        for (const w of workers) if (!paused.has(w)) w.supervise();
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const kills: string[] = [];
    for (let k = 0; k < KILLS; k++) {
      // Spread over the first ~60% of the input, each at a random moment after a commit.
      const target = Math.floor((TOTAL * (k + 1)) / (KILLS + 2));
      await until(() => count(all(), 'COMMITTED') >= target, 60_000, `${target} records committed`);
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 300)));
      const w = workers[Math.floor(Math.random() * workers.length)]!;
      kills.push(`worker ${w.slot} at ${count(all(), 'COMMITTED')}`);
      await w.current.kill();
      w.start();
    }
    // The zombie: a worker frozen with its batch produced and its offsets not yet sent, until
    // the group has given every partition to the other one (its session expired); thawed, its
    // TxnOffsetCommit carries the old generation and member id, and must be refused.
    const zombie = workers[Math.floor(Math.random() * workers.length)]!;
    const other = workers.find((w) => w !== zombie)!;
    const produced = zombie.lines.filter((l) => l.startsWith('PRODUCED')).length;
    await until(() => zombie.lines.filter((l) => l.startsWith('PRODUCED')).length > produced, 60_000, `worker ${zombie.slot} to produce a batch`);
    const zombieRun = zombie.current;
    zombieRun.child.kill('SIGSTOP');
    paused.add(zombie);
    const frozenAt = Date.now();
    const zombieLines = zombieRun.lines.length;
    const assignedBefore = other.lines.filter((l) => l.startsWith('ASSIGNED')).length;
    const everything = Array.from({ length: PARTITIONS }, (_, i) => i).join(',');
    await until(
      () =>
        other.lines
          .filter((l) => l.startsWith('ASSIGNED'))
          .slice(assignedBefore)
          .includes(`ASSIGNED ${everything}`),
      60_000,
      `worker ${other.slot} to get every partition`,
    );
    const takeoverMs = Date.now() - frozenAt;
    zombieRun.child.kill('SIGCONT');
    paused.delete(zombie);
    await until(() => zombieRun.lines.length > zombieLines || zombieRun.exited, 60_000, 'the zombie to end its transaction');
    const zombieSaid = zombieRun.lines[zombieLines] ?? `(nothing; exit ${zombieRun.child.exitCode})`;
    assert.match(zombieSaid, /^ABORTED /, `the zombie's transaction was fenced and aborted (it said: ${zombieSaid})`);
    assert.match(zombieSaid, /UNKNOWN_MEMBER_ID|ILLEGAL_GENERATION|FENCED/i, `fenced by its group generation or member id (${zombieSaid})`);

    await until(async () => (await committedInput(broker.bootstrap)) >= TOTAL, 90_000, 'the whole input committed');
    const processedMs = Date.now() - started;
    for (const w of workers) for (const r of w.runs) await r.kill();
    const stableMs = await waitStable(broker.port, OUT, PARTITIONS, 30_000);
    const out = await consumeAll(broker.bootstrap, OUT, 'read_committed', PARTITIONS);
    const dupes = out.filter((v, i) => out.indexOf(v) !== i);
    assert.deepEqual(dupes.slice(0, 10), [], `${dupes.length} records duplicated in the output`);
    assert.equal(out.length, TOTAL);
    assert.deepEqual(new Set(out), new Set(Array.from({ length: TOTAL }, (_, i) => `v${i}`)));
    const lines = all();
    t.diagnostic(
      `killed ${kills.join(', ')} of ${TOTAL}; zombie worker ${zombie.slot} frozen ${takeoverMs} ms until worker ${other.slot} had every partition, then said: ${zombieSaid}; ` +
        `${lines.filter((l) => l.startsWith('ASSIGNED')).length} assignments, ${lines.filter((l) => l.startsWith('COMMITTED')).length} transactions committed, ` +
        `${count(lines, 'DROPPED')} records dropped at rebalances, ${workers.reduce((n, w) => n + w.runs.length, 0)} worker runs; ` +
        `whole input committed after ${processedMs} ms, output LSO at its end ${stableMs} ms after the workers stopped; ` +
        `aborts: ${lines.filter((l) => /^(ABORTED|FATAL)/.test(l)).join(' | ')}`,
    );
  } finally {
    for (const w of workers) {
      w.current.child.kill('SIGCONT');
      for (const r of w.runs) await r.kill();
    }
    await broker.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
});
