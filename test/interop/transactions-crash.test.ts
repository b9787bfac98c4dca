/**
 * Transactions under crashes, with real clients (issue 14): a producer SIGKILLed with its
 * transaction open has it aborted by the coordinator once it times out, so read_committed
 * consumers are not stuck behind it; the broker SIGKILLed while a producer runs transactions
 * in a loop comes back with every transaction either completed or aborted, the last stable
 * offset back at the log end, and no read_committed consumer seeing part of a transaction; and
 * an exactly-once consume-transform-produce loop SIGKILLed repeatedly outputs each input once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { PYTHON, requirePeer } from '../helpers/peers.js';
import { run } from '../helpers/run.js';
import { consumeAll } from './confluent-consume.js';
import { HANG, Lines, TXN_LOOP as LOOP, byTransaction, createTopic, latestOffsets, waitStable } from './txn-helpers.js';
import { BrokerProcess, freePort } from './groups/crash-helpers.js';

const TXN_PROPS = {
  'transaction.state.log.num.partitions': '3',
  'offsets.topic.num.partitions': '3',
  'transaction.abort.timed.out.transaction.cleanup.interval.ms': '500',
};

const consume = (bootstrap: string, topic: string, isolation: 'read_committed' | 'read_uncommitted', partitions: number): Promise<string[]> =>
  consumeAll(bootstrap, topic, isolation, partitions);

const COMMIT_ONE = `
import sys
from confluent_kafka import Producer
bootstrap, topic = sys.argv[1], sys.argv[2]
p = Producer({'bootstrap.servers': bootstrap, 'transactional.id': 'after-tx'})
p.init_transactions(60)
p.begin_transaction()
for i in range(4): p.produce(topic, value=('after-%d' % i).encode(), partition=i % 2)
p.commit_transaction(60)
print('COMMITTED', flush=True)
`;

test('a transaction left open by a SIGKILLed producer is aborted at its timeout; read_committed is not stuck behind it', { timeout: 180_000 }, async (t) => {
  if (!requirePeer(t, 'python3-confluent-kafka')) return;
  const dir = await mkdtemp(join(tmpdir(), 'fjord-txn-hang-'));
  const broker = new BrokerProcess(await freePort(), dir, TXN_PROPS);
  const topic = 'hang';
  const hang = new Lines(PYTHON, ['-c', HANG, broker.bootstrap, topic, '2000']);
  try {
    await broker.start();
    await createTopic(broker.bootstrap, topic, 2);
    await hang.until((l) => l.includes('FLUSHED'), 60_000, 'the open transaction to be flushed');
    await hang.kill();
    const after = await run(PYTHON, ['-c', COMMIT_ONE, broker.bootstrap, topic], { timeoutMs: 90_000 });
    assert.equal(after.code, 0, after.stderr);
    // The hung transaction holds the LSO at its first offset until the coordinator aborts it
    // (2 s timeout, checked every 0.5 s); 30 s is a generous bound on a loaded machine.
    await waitStable(broker.port, topic, 2, 30_000);
    const committed = await consume(broker.bootstrap, topic, 'read_committed', 2);
    assert.deepEqual(committed.sort(), ['after-0', 'after-1', 'after-2', 'after-3']);
    const all = await consume(broker.bootstrap, topic, 'read_uncommitted', 2);
    assert.deepEqual(all.filter((v) => v.startsWith('hang-')).sort(), ['hang-0', 'hang-1', 'hang-2', 'hang-3', 'hang-4'], 'the aborted records are in the log');
  } finally {
    await hang.kill();
    await broker.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
});

const PER_TXN = 6;

test('the broker SIGKILLed in the middle of transactions: each one completes or is aborted, the LSO reaches the log end, read_committed sees whole transactions', {
  timeout: 240_000,
}, async (t) => {
  if (!requirePeer(t, 'python3-confluent-kafka')) return;
  const dir = await mkdtemp(join(tmpdir(), 'fjord-txn-crash-'));
  const broker = new BrokerProcess(await freePort(), dir, TXN_PROPS);
  const topic = 'loop';
  let loop: Lines | undefined;
  const count = (l: string[]): number => l.filter((x) => x.startsWith('COMMITTED')).length;
  try {
    await broker.start();
    await createTopic(broker.bootstrap, topic, 2);
    // Round a: the producer lives on through the broker's crash and restart.
    loop = new Lines(PYTHON, ['-c', LOOP, broker.bootstrap, topic, String(PER_TXN), 'a']);
    const a = loop;
    await a.until((x) => count(x) >= 5, 60_000, 'five committed transactions');
    await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 300)));
    await broker.kill('SIGKILL');
    const before = count(a.lines);
    await broker.start();
    // The producer carries on after the restart (or fails fatally; either way the broker must settle).
    await a
      .until((x) => count(x) >= before + 3 || x.some((y) => y.startsWith('ERROR')), 90_000, 'transactions after the restart')
      .catch((e: unknown) => {
        if (!a.exited) throw e;
      });
    await a.kill();
    // Its last, open transaction is aborted at its 5 s timeout.
    const tookA = await waitStable(broker.port, topic, 2, 45_000);
    // Round b: producer and broker die together; the restarted coordinator finds the open
    // transaction in __transaction_state and must abort it by itself.
    loop = new Lines(PYTHON, ['-c', LOOP, broker.bootstrap, topic, String(PER_TXN), 'b']);
    const b = loop;
    await b.until((x) => count(x) >= 5, 60_000, 'five committed transactions');
    await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 300)));
    await Promise.all([b.kill(), broker.kill('SIGKILL')]);
    await broker.start();
    const tookB = await waitStable(broker.port, topic, 2, 45_000);
    // Round c, not left to chance: a transaction certainly open (records flushed, 4 s timeout)
    // when producer and broker die. After the restart it still holds the LSO back, then the
    // coordinator aborts it.
    const hang = new Lines(PYTHON, ['-c', HANG, broker.bootstrap, topic, '4000']);
    await hang.until((l) => l.includes('FLUSHED'), 60_000, 'the open transaction to be flushed');
    await Promise.all([hang.kill(), broker.kill('SIGKILL')]);
    await broker.start();
    const [lso, hw] = [await latestOffsets(broker.port, topic, 2, true), await latestOffsets(broker.port, topic, 2, false)];
    assert.ok(
      lso.some((o, i) => o < hw[i]!),
      `the open transaction holds the LSO back after the restart (lso ${lso.join(',')}, hw ${hw.join(',')})`,
    );
    const tookC = await waitStable(broker.port, topic, 2, 45_000);
    const lines = [...a.lines, ...b.lines];
    t.diagnostic(
      `lso at the log end ${tookA} ms after producer a died, ${tookB} ms after the restart with b's transaction open, ${tookC} ms after the restart with the hung transaction; ${count(lines)} transactions committed; other lines: ${lines.filter((x) => !x.startsWith('COMMITT')).join(' | ')}`,
    );

    const committed = await consume(broker.bootstrap, topic, 'read_committed', 2);
    const byTag = byTransaction(committed);
    for (const [tag, n] of byTag) assert.equal(n, PER_TXN, `transaction ${tag}: read_committed saw ${n} of ${PER_TXN} records`);
    for (const line of lines.filter((x) => x.startsWith('COMMITTED'))) {
      const tag = line.split(' ')[1]!;
      assert.equal(byTag.get(tag), PER_TXN, `acknowledged transaction ${tag} is not fully visible`);
    }
    assert.equal(byTag.get('hang'), undefined, 'the hung transaction was aborted');
    const all = await consume(broker.bootstrap, topic, 'read_uncommitted', 2);
    assert.equal(all.filter((v) => v.startsWith('hang-')).length, 5, 'read_uncommitted sees the aborted records');
  } finally {
    await loop?.kill();
    await broker.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
});

const EOS = `
import sys
from confluent_kafka import Producer, Consumer, TopicPartition
bootstrap, src, dst = sys.argv[1], sys.argv[2], sys.argv[3]
p = Producer({'bootstrap.servers': bootstrap, 'transactional.id': 'eos-tx', 'transaction.timeout.ms': 10000, 'linger.ms': 1})
p.init_transactions(60)  # fences the killed predecessor and aborts its open transaction
c = Consumer({'bootstrap.servers': bootstrap, 'group.id': 'eos', 'enable.auto.commit': False,
              'isolation.level': 'read_committed', 'auto.offset.reset': 'earliest'})
c.assign([TopicPartition(src, 0), TopicPartition(src, 1)])
while True:
    msgs = c.consume(5, 0.5)
    for m in msgs:
        if m.error(): raise Exception(str(m.error()))
    if not msgs: continue
    p.begin_transaction()
    for m in msgs: p.produce(dst, value=m.value(), partition=m.partition())
    pos = c.position(c.assignment())
    p.send_offsets_to_transaction(pos, c.consumer_group_metadata(), 30)
    p.commit_transaction(30)
    print('COMMITTED', ' '.join('%d:%d' % (t.partition, t.offset) for t in pos), flush=True)
`;

test('an exactly-once consume-transform-produce loop SIGKILLed 3 times: the output read_committed holds each input record exactly once', {
  timeout: 240_000,
}, async (t) => {
  if (!requirePeer(t, 'python3-confluent-kafka')) return;
  const dir = await mkdtemp(join(tmpdir(), 'fjord-txn-eos-'));
  const broker = new BrokerProcess(await freePort(), dir, TXN_PROPS);
  const TOTAL = 600;
  let proc: Lines | undefined;
  const allLines: string[][] = [];
  // Input consumed and committed so far, over all runs: the highest committed position of each partition.
  const progress = (): number => {
    const max = [0, 0];
    for (const l of allLines.flat()) {
      for (const pair of l.split(' ').slice(1)) {
        const [part, off] = pair.split(':').map(Number);
        if (part !== undefined && off !== undefined) max[part] = Math.max(max[part]!, off);
      }
    }
    return max[0]! + max[1]!;
  };
  try {
    await broker.start();
    await createTopic(broker.bootstrap, 'eos-in', 2);
    await createTopic(broker.bootstrap, 'eos-out', 2);
    const kafka = new Kafka({ brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
    const producer = kafka.producer();
    await producer.connect();
    await producer.send({ topic: 'eos-in', acks: -1, messages: Array.from({ length: TOTAL }, (_, i) => ({ value: `v${i}`, partition: i % 2 })) });
    await producer.disconnect();
    const kills: number[] = [];
    for (let round = 0; round < 4; round++) {
      proc = new Lines(PYTHON, ['-c', EOS, broker.bootstrap, 'eos-in', 'eos-out']);
      const p = proc;
      allLines.push(p.lines);
      if (round === 3) {
        await p.until(() => progress() === TOTAL, 60_000, 'the whole input to be processed');
        break;
      }
      // Kill after at least one commit of this run, at a random moment within the next 0.3 s.
      await p.until((l) => l.some((x) => x.startsWith('COMMITTED')) || progress() === TOTAL, 60_000, 'a committed transaction');
      await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 300)));
      kills.push(progress());
      await p.kill();
    }
    await proc?.kill();
    t.diagnostic(`killed at input progress ${kills.join(', ')} of ${TOTAL}`);
    await waitStable(broker.port, 'eos-out', 2, 30_000);
    const out = await consume(broker.bootstrap, 'eos-out', 'read_committed', 2);
    const dupes = out.filter((v, i) => out.indexOf(v) !== i);
    assert.deepEqual(dupes.slice(0, 10), [], `${dupes.length} records duplicated in the output`);
    assert.equal(out.length, TOTAL);
    assert.deepEqual(new Set(out), new Set(Array.from({ length: TOTAL }, (_, i) => `v${i}`)));
  } finally {
    await proc?.kill();
    await broker.kill('SIGKILL');
    await rm(dir, { recursive: true, force: true });
  }
});
