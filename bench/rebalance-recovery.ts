/**
 * Recovery after a member's death (issue 24): the time from kill -9 of one member of a group of
 * three to every partition it held being consumed again by the others, for
 * - classic eager: kafkajs members (its round-robin assignor);
 * - classic cooperative: librdkafka members (confluent-kafka for Python,
 *   `partition.assignment.strategy=cooperative-sticky`);
 * - the consumer protocol (KIP-848): @platformatic/kafka 2.12 members, `groupProtocol: 'consumer'`,
 * against the same broker (its own process, temp log dir), in the same run, interleaved round by
 * round. Every group has the same session timeout (SESSION_MS) and heartbeat interval
 * (HEARTBEAT_MS): the classic clients ask for them, the broker's group.consumer.* set them for
 * the consumer protocol. A producer writes one record to each of the six partitions every 20 ms
 * all along, so a partition's first record after recovery comes within ~20 ms of it.
 *
 *   node --import tsx bench/rebalance-recovery.ts [rounds=3]
 *
 * Times are taken in this process when a member's line about a record arrives (same clock for
 * all). The session timeout dominates every figure: a dead member is noticed only when its
 * session expires; what follows (rebalance, reconciliation, first fetch) is what differs.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { PYTHON } from '../test/helpers/peers.js';
import { type FjordChild, startSourceBroker } from './suite/fjord-child.js';
import { median } from './suite/stats.js';

const ROUNDS = Number(process.argv[2] ?? 3);
const SESSION_MS = 6000;
const HEARTBEAT_MS = 1000;
const PARTITIONS = 6;
const KINDS = ['eager', 'cooperative', 'consumer'] as const;
type Kind = (typeof KINDS)[number];
const LABEL: Record<Kind, string> = {
  eager: 'classic eager (kafkajs, roundrobin)',
  cooperative: 'classic cooperative (librdkafka 2.0.2, cooperative-sticky)',
  consumer: 'consumer protocol (@platformatic/kafka 2.12.1)',
};

const COOPERATIVE_MEMBER = `
import sys
from confluent_kafka import Consumer
bs, group, topic, session, heartbeat = sys.argv[1:6]
c = Consumer({'bootstrap.servers': bs, 'group.id': group, 'auto.offset.reset': 'latest',
              'partition.assignment.strategy': 'cooperative-sticky', 'session.timeout.ms': int(session),
              'heartbeat.interval.ms': int(heartbeat), 'fetch.wait.max.ms': 100, 'auto.commit.interval.ms': 500})
c.subscribe([topic])
while True:
    for m in c.consume(100, 0.1):
        if m.error() is None:
            print('P %d' % m.partition(), flush=True)
`;

/** This tree's broker, from source under tsx, with the session and heartbeat this bench measures. */
function startBroker(dir: string): Promise<FjordChild> {
  return startSourceBroker(dir, {
    'group.initial.rebalance.delay.ms': '0',
    'offsets.topic.num.partitions': '1',
    'group.consumer.session.timeout.ms': String(SESSION_MS),
    'group.consumer.min.session.timeout.ms': String(SESSION_MS),
    'group.consumer.heartbeat.interval.ms': String(HEARTBEAT_MS),
    'group.consumer.min.heartbeat.interval.ms': String(HEARTBEAT_MS),
  });
}

interface Member {
  child: ChildProcess;
  /** When it last consumed a record of each partition (ms, performance.now()). */
  lastSeen: Map<number, number>;
  /** When it first consumed a record of each partition after `kill.at`. */
  firstAfterKill: Map<number, number>;
}

/** When this round's victim was killed (Infinity before). */
const kill = { at: Number.POSITIVE_INFINITY };
/** Per partition, when any member last consumed it, and its longest pause since the kill. */
const lastAny = new Map<number, number>();
const longestPause = new Map<number, number>();

function startMember(kind: Kind, bootstrap: string, group: string, topic: string): Member {
  const args = [bootstrap, group, topic, String(SESSION_MS), String(HEARTBEAT_MS)];
  const child =
    kind === 'cooperative'
      ? spawn(PYTHON, ['-c', COOPERATIVE_MEMBER, ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
      : spawn(process.execPath, ['--import', 'tsx', 'bench/rebalance-recovery-member.ts', kind, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const member: Member = { child, lastSeen: new Map(), firstAfterKill: new Map() };
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (!line.startsWith('P ')) return;
    const p = Number(line.slice(2));
    const now = performance.now();
    member.lastSeen.set(p, now);
    if (now > kill.at) {
      if (!member.firstAfterKill.has(p)) member.firstAfterKill.set(p, now);
      const pause = now - Math.max(lastAny.get(p) ?? kill.at, kill.at);
      if (pause > (longestPause.get(p) ?? 0)) longestPause.set(p, pause);
    }
    lastAny.set(p, now);
  });
  return member;
}

async function until<T>(what: string, ms: number, probe: () => T | undefined): Promise<T> {
  const deadline = performance.now() + ms;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5)); // poll; the figures are in seconds
  }
}

/**
 * One round of one kind: ms from the kill to every orphaned partition consumed again, and the
 * longest pause of the survivors' own partitions meanwhile (an eager rebalance stops them too).
 */
async function round(kind: Kind, n: number, bootstrap: string, kafka: Kafka, producer: Producer): Promise<{ recovery: number; survivorsPause: number }> {
  lastAny.clear();
  longestPause.clear();
  const topic = `rr-${kind}-${n}`;
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS }], waitForLeaders: true });
  await admin.disconnect();
  let producing = true;
  const pump = (async () => {
    while (producing) {
      await producer.send({ topic, acks: 1, messages: Array.from({ length: PARTITIONS }, (_, p) => ({ partition: p, value: 'x' })) });
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  const members = [0, 1, 2].map(() => startMember(kind, bootstrap, topic, topic));
  try {
    // Stable: for 2 s, each partition consumed within the last 500 ms by exactly one member, every member busy.
    const owners = (now: number) => members.map((m) => [...m.lastSeen].filter(([, at]) => now - at < 500).map(([p]) => p));
    let stableSince = -1;
    await until(`${kind}: three members sharing the six partitions`, 90_000, () => {
      const now = performance.now();
      const o = owners(now);
      const all = o.flat();
      const ok = o.every((ps) => ps.length > 0) && all.length === PARTITIONS && new Set(all).size === PARTITIONS;
      if (!ok) stableSince = -1;
      else if (stableSince < 0) stableSince = now;
      return ok && now - stableSince > 2000 ? true : undefined;
    });
    const victim = members[0]!;
    const orphaned = owners(performance.now())[0]!;
    kill.at = performance.now();
    victim.child.kill('SIGKILL');
    const survivors = members.slice(1);
    const recovered = (p: number) => Math.min(...survivors.map((m) => m.firstAfterKill.get(p) ?? Number.POSITIVE_INFINITY));
    await until(`${kind}: partitions ${orphaned.join(',')} consumed again`, 90_000, () =>
      orphaned.every((p) => recovered(p) < Number.POSITIVE_INFINITY) ? true : undefined,
    );
    const recoveredAt = Math.max(...orphaned.map(recovered));
    // The survivors' partitions: each consumed again after the recovery, so its pause is known.
    const kept = Array.from({ length: PARTITIONS }, (_, p) => p).filter((p) => !orphaned.includes(p));
    await until(`${kind}: the survivors' partitions consumed after the recovery`, 30_000, () =>
      kept.every((p) => (lastAny.get(p) ?? 0) > recoveredAt) ? true : undefined,
    );
    return { recovery: recoveredAt - kill.at, survivorsPause: Math.max(0, ...kept.map((p) => longestPause.get(p) ?? 0)) };
  } finally {
    kill.at = Number.POSITIVE_INFINITY;
    producing = false;
    await pump;
    for (const m of members) m.child.kill('SIGKILL');
  }
}

const dir = await mkdtemp(path.join(tmpdir(), 'fjord-rebalance-recovery-'));
const broker = await startBroker(dir);
const kafka = new Kafka({ clientId: 'rr-bench', brokers: [broker.bootstrap], logLevel: logLevel.NOTHING });
const producer = kafka.producer();
await producer.connect();
const figures = new Map<Kind, { recovery: number; survivorsPause: number }[]>(KINDS.map((k) => [k, []]));
try {
  process.stdout.write(`session timeout ${SESSION_MS} ms, heartbeat interval ${HEARTBEAT_MS} ms, 3 members over ${PARTITIONS} partitions, one killed -9\n`);
  for (let n = 0; n < ROUNDS; n++) {
    for (const kind of KINDS) {
      const f = await round(kind, n, broker.bootstrap, kafka, producer);
      figures.get(kind)!.push(f);
      process.stdout.write(
        `round ${n + 1} ${kind}: recovered in ${Math.round(f.recovery)} ms, survivors' partitions paused up to ${Math.round(f.survivorsPause)} ms\n`,
      );
    }
  }
  process.stdout.write(
    "\n| protocol | death to its partitions consumed again, each round (ms) | median | median after the session timeout | survivors' partitions' longest pause, each round (ms) |\n|---|---|---|---|---|\n",
  );
  for (const kind of KINDS) {
    const f = figures.get(kind)!;
    const m = median(f.map((x) => x.recovery));
    process.stdout.write(
      `| ${LABEL[kind]} | ${f.map((x) => Math.round(x.recovery)).join(', ')} | ${Math.round(m)} | ${Math.round(m - SESSION_MS)} | ${f.map((x) => Math.round(x.survivorsPause)).join(', ')} |\n`,
    );
  }
} finally {
  await producer.disconnect();
  broker.child.kill('SIGKILL');
  await rm(dir, { recursive: true, force: true });
}
