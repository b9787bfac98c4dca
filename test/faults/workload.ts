/**
 * The load a fault scenario runs under: two idempotent acks=all producers nobody here wrote
 * (confluent-kafka, i.e. librdkafka, in a child process; kafkajs in this process) writing
 * numbered values to every partition of one topic, and a read_uncommitted observer
 * (confluent-kafka, assign from the beginning) recording every record it is handed.
 *
 * Every acknowledgement is kept with its partition, offset and arrival time, so afterwards the
 * verifier can say what was acknowledged and lost, and the scenarios can say how long
 * production stalled after a fault (the first acknowledgement after it).
 *
 * By default the producers send as fast as their in-flight limits allow (the fault suite wants
 * volume). With `ratePerSec` each sends that many records a second, paced by the clock whether
 * or not earlier ones were answered (the liveness soak, tools/fuzz/liveness, wants a latency a
 * stall shows in: librdkafka's own produce()-to-acknowledgement time is kept with each of its
 * acknowledgements).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import kafkajs from 'kafkajs';
import { PYTHON } from '../helpers/peers.js';

export interface Ack {
  partition: number;
  offset: number;
  value: string;
  atMs: number;
  /** confluent-kafka's acknowledgements: ms from produce() to the acknowledgement (Message.latency()). */
  latencyMs?: number;
}

export interface WorkloadOptions {
  /** Records a second per producer, paced by the clock; default: as fast as the in-flight limits allow. */
  ratePerSec?: number;
}

export interface Seen {
  partition: number;
  offset: number;
  value: string;
}

const CONFLUENT_PRODUCER = `
import sys, time
from confluent_kafka import Producer
p = Producer({'bootstrap.servers': sys.argv[1], 'acks': 'all', 'enable.idempotence': True,
              'linger.ms': 5, 'message.timeout.ms': 120000, 'retry.backoff.ms': 100})
topic, partitions, rate = sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
def report(err, msg):
    if err is None:
        sys.stdout.write('A %d %d %s %d\\n' % (msg.partition(), msg.offset(), msg.value().decode(), round((msg.latency() or 0) * 1000)))
    else:
        sys.stdout.write('F %s %s\\n' % (msg.value().decode(), str(err).replace(' ', '_')))
def send(i):
    p.produce(topic, value=('c%d' % i).encode(), partition=i % partitions, on_delivery=report)
i = 0
t0 = time.monotonic()
while True:
    if rate > 0:
        # paced by the clock: a record is due whether or not the earlier ones were answered
        due = int((time.monotonic() - t0) * rate)
        try:
            while i < due:
                send(i)
                i += 1
        except BufferError:
            pass
        p.poll(0.005)
    elif len(p) < 2000:
        send(i)
        i += 1
    else:
        p.poll(0.01)
    p.poll(0)
    sys.stdout.flush()
`;

const OBSERVER = `
import sys
from confluent_kafka import Consumer, TopicPartition
c = Consumer({'bootstrap.servers': sys.argv[1], 'group.id': 'fault-observer', 'enable.auto.commit': False,
              'isolation.level': 'read_uncommitted', 'enable.partition.eof': False})
c.assign([TopicPartition(sys.argv[2], p, -2) for p in range(int(sys.argv[3]))])
while True:
    for m in c.consume(500, 0.2):
        if m.error() is None:
            sys.stdout.write('%d %d %s\\n' % (m.partition(), m.offset(), m.value().decode()))
    sys.stdout.flush()
`;

/** Reads "lines" from a child's stdout, one callback per complete line. */
function onLines(child: ChildProcess, fn: (line: string) => void): void {
  let buf = '';
  child.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    const lines = buf.split('\n');
    buf = lines.pop()!;
    for (const l of lines) if (l) fn(l);
  });
}

export class Workload {
  readonly acks: Ack[] = [];
  readonly seen: Seen[] = [];
  /** Values whose producer gave up on them (not acknowledged: neither loss nor success). */
  failed = 0;
  private readonly children: ChildProcess[] = [];
  private readonly stderr = new Map<ChildProcess, string>();
  private running = true;
  private kafkajsLoop: Promise<void> = Promise.resolve();
  private ackListeners = new Set<() => void>();

  private constructor(
    private readonly bootstrap: string,
    private readonly topic: string,
    private readonly partitions: number,
    private readonly rate: number,
  ) {}

  static start(bootstrap: string, topic: string, partitions: number, opts: WorkloadOptions = {}): Workload {
    const w = new Workload(bootstrap, topic, partitions, opts.ratePerSec ?? 0);
    const producer = w.spawnChild(CONFLUENT_PRODUCER, String(w.rate));
    onLines(producer, (l) => {
      const parts = l.split(' ');
      if (parts[0] === 'A') w.ack(Number(parts[1]), Number(parts[2]), parts[3]!, parts[4] === undefined ? undefined : Number(parts[4]));
      else w.failed++;
    });
    const observer = w.spawnChild(OBSERVER);
    onLines(observer, (l) => {
      const [p, o, v] = l.split(' ');
      w.seen.push({ partition: Number(p), offset: Number(o), value: v! });
    });
    w.kafkajsLoop = w.runKafkajs();
    return w;
  }

  private spawnChild(script: string, ...extra: string[]): ChildProcess {
    const child = spawn(PYTHON, ['-c', script, this.bootstrap, this.topic, String(this.partitions), ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
    this.stderr.set(child, '');
    child.stderr!.on('data', (d: Buffer) => this.stderr.set(child, (this.stderr.get(child)! + d.toString()).slice(-2000)));
    this.children.push(child);
    return child;
  }

  private ack(partition: number, offset: number, value: string, latencyMs?: number): void {
    this.acks.push(latencyMs === undefined ? { partition, offset, value, atMs: Date.now() } : { partition, offset, value, atMs: Date.now(), latencyMs });
    for (const l of [...this.ackListeners]) l();
  }

  /** kafkajs, idempotent, one partition per send so each record's offset is base + index. */
  private async runKafkajs(): Promise<void> {
    const kafka = new kafkajs.Kafka({
      brokers: this.bootstrap.split(','),
      clientId: 'fault-kafkajs',
      logLevel: kafkajs.logLevel.NOTHING,
      retry: { retries: 30, initialRetryTime: 100, maxRetryTime: 1000 },
    });
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
    await producer.connect();
    let i = 0;
    const t0 = Date.now();
    try {
      while (this.running) {
        if (this.rate > 0) {
          // paced: send i is due at i * 20 records / rate (pacing, not synchronisation)
          const wait = t0 + (i * 20 * 1000) / this.rate - Date.now();
          if (wait > 0) await new Promise((r) => setTimeout(r, wait));
          if (!this.running) break;
        }
        const partition = i % this.partitions;
        const values = Array.from({ length: 20 }, (_, k) => `j${i * 20 + k}`);
        i++;
        try {
          const [meta] = await producer.send({ topic: this.topic, acks: -1, timeout: 30_000, messages: values.map((value) => ({ value, partition })) });
          const base = Number(meta!.baseOffset);
          values.forEach((v, k) => this.ack(partition, base + k, v));
        } catch {
          this.failed += values.length;
        }
      }
    } finally {
      await producer.disconnect().catch(() => undefined);
    }
  }

  /** Resolves once `n` more acknowledgements have arrived (or rejects after `timeoutMs`). */
  waitForAcks(n: number, timeoutMs: number): Promise<void> {
    const target = this.acks.length + n;
    return new Promise((resolve, reject) => {
      const check = (): void => {
        if (this.acks.length < target) return;
        done();
        resolve();
      };
      const timer = setTimeout(() => {
        done();
        reject(new Error(`only ${this.acks.length - (target - n)} of ${n} acknowledgements in ${timeoutMs} ms; ${this.diagnostics()}`));
      }, timeoutMs);
      const done = (): void => {
        clearTimeout(timer);
        this.ackListeners.delete(check);
      };
      this.ackListeners.add(check);
      check();
    });
  }

  /** Milliseconds from `sinceMs` to the first acknowledgement of `partition` after it (undefined if none yet). */
  firstAckAfter(sinceMs: number, partition?: number): number | undefined {
    for (let i = this.acks.length - 1; i >= 0; i--) {
      const a = this.acks[i]!;
      if (a.atMs < sinceMs) break;
      if (partition === undefined || a.partition === partition) {
        let first = a;
        for (let j = i - 1; j >= 0 && this.acks[j]!.atMs >= sinceMs; j--) {
          if (partition === undefined || this.acks[j]!.partition === partition) first = this.acks[j]!;
        }
        return first.atMs - sinceMs;
      }
    }
    return undefined;
  }

  diagnostics(): string {
    return this.children.map((c, i) => `child ${i} (exit ${c.exitCode}): ${this.stderr.get(c)!.slice(-500)}`).join('; ');
  }

  /** SIGKILLs the children at once (for an exit hook, which cannot wait). */
  killNow(): void {
    this.running = false;
    for (const c of this.children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  }

  /** Stops producing and observing; waits until the children and the kafkajs loop are gone. */
  async stop(): Promise<void> {
    this.running = false;
    for (const c of this.children) {
      if (c.exitCode === null && c.signalCode === null) {
        const exited = once(c, 'exit');
        c.kill('SIGKILL');
        await exited;
      }
    }
    await this.kafkajsLoop;
  }
}
