/**
 * The soak's well-behaved clients besides the load's producers: a consumer group of two
 * confluent-kafka members (Python processes) reading the load's topic, each reporting once a
 * second the end-to-end latency of what it consumed (now minus the record's CreateTime, so a
 * stall anywhere between produce() and the consumer shows), its position and its partition
 * assignments; and the prober (prober.ts), the latency of a fresh client at each broker.
 * Samples are split into the baseline window (after a warm-up that is not counted: connections
 * made, the group's first backlog read) and from the attacks on.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { PYTHON } from '../../../test/helpers/peers.js';
import { Histogram } from './histogram.js';

const GROUP_MEMBER = `
import sys, time, json
from confluent_kafka import Consumer
boot, topic, group, name = sys.argv[1:5]
c = Consumer({'bootstrap.servers': boot, 'group.id': group, 'client.id': name, 'auto.offset.reset': 'earliest',
              'enable.auto.commit': True, 'auto.commit.interval.ms': 1000, 'session.timeout.ms': 10000,
              'heartbeat.interval.ms': 1000, 'enable.partition.eof': False, 'fetch.wait.max.ms': 100})
state = {'assigns': 0}
def on_assign(consumer, parts):
    state['assigns'] += 1
c.subscribe([topic], on_assign=on_assign)
h, n, errors, last_error, pos = {}, 0, 0, '', {}
last = time.monotonic()
while True:
    for m in c.consume(500, 0.2):
        if m.error() is not None:
            errors += 1
            last_error = str(m.error())
            continue
        ms = int(time.time() * 1000 - m.timestamp()[1])
        h[ms] = h.get(ms, 0) + 1
        n += 1
        pos[m.partition()] = m.offset() + 1
    if time.monotonic() - last >= 1:
        last = time.monotonic()
        sys.stdout.write(json.dumps({'n': n, 'h': h, 'pos': pos, 'assigns': state['assigns'], 'errors': errors, 'lastError': last_error}) + '\\n')
        sys.stdout.flush()
        h = {}
`;

interface MemberLine {
  n: number;
  h: Record<string, number>;
  pos: Record<string, number>;
  assigns: number;
  errors: number;
  lastError: string;
}

interface ProberLine {
  broker: number;
  h: Record<string, number>;
  failed: number;
  lastError: string;
}

export interface SidePhase {
  group: Histogram;
  probers: Histogram[];
}

export class SideClients {
  readonly baseline: SidePhase;
  readonly attack: SidePhase;
  private phase: 'warm-up' | 'baseline' | 'attack' = 'warm-up';
  private readonly children: ChildProcess[] = [];
  /** Per member: its last line, and its assignment count when the attacks began. */
  private readonly members: { last: MemberLine | null; assignsAtArm: number }[] = [];
  readonly probeFailures: number[];
  readonly probeLastError: string[];
  /** The furthest position any member reported, by partition. */
  readonly groupPositions = new Map<number, number>();

  private constructor(brokers: number) {
    const phase = (): SidePhase => ({ group: new Histogram(), probers: Array.from({ length: brokers }, () => new Histogram()) });
    this.baseline = phase();
    this.attack = phase();
    this.probeFailures = Array.from({ length: brokers }, () => 0);
    this.probeLastError = Array.from({ length: brokers }, () => '');
  }

  static start(bootstrap: string, topic: string, partitions: number, group: string): SideClients {
    const brokers = bootstrap.split(',').length;
    const s = new SideClients(brokers);
    for (let i = 0; i < 2; i++) {
      s.members.push({ last: null, assignsAtArm: 0 });
      const m = s.spawn(PYTHON, ['-c', GROUP_MEMBER, bootstrap, topic, group, `liveness-member-${i}`]);
      s.onJson<MemberLine>(m, (line) => s.noteMember(i, line));
    }
    const prober = s.spawn(process.execPath, ['--import', 'tsx', resolve(import.meta.dirname, 'prober.ts'), bootstrap, topic, String(partitions), '200']);
    s.onJson<ProberLine>(prober, (line) => {
      s.current?.probers[line.broker]?.merge(line.h);
      if (s.phase === 'attack') s.probeFailures[line.broker]! += line.failed;
      if (line.failed > 0) s.probeLastError[line.broker] = line.lastError;
    });
    return s;
  }

  private spawn(cmd: string, args: string[]): ChildProcess {
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    child.stderr!.resume();
    this.children.push(child);
    return child;
  }

  private onJson<T>(child: ChildProcess, fn: (line: T) => void): void {
    createInterface({ input: child.stdout! }).on('line', (l) => {
      let v: T;
      try {
        v = JSON.parse(l) as T;
      } catch {
        return;
      }
      fn(v);
    });
  }

  private get current(): SidePhase | null {
    return this.phase === 'attack' ? this.attack : this.phase === 'baseline' ? this.baseline : null;
  }

  private noteMember(i: number, line: MemberLine): void {
    this.current?.group.merge(line.h);
    for (const [p, off] of Object.entries(line.pos)) this.groupPositions.set(Number(p), Math.max(this.groupPositions.get(Number(p)) ?? 0, off));
    this.members[i]!.last = line;
  }

  /** Records consumed by the group so far (both members). */
  get consumed(): number {
    return this.members.reduce((n, m) => n + (m.last?.n ?? 0), 0);
  }

  /** Both members have an assignment and have consumed something. */
  get groupUp(): boolean {
    return this.members.every((m) => (m.last?.assigns ?? 0) > 0) && this.consumed > 0;
  }

  /** From now on samples count for the baseline. */
  startBaseline(): void {
    this.phase = 'baseline';
  }

  /** From now on samples count for the attack phase. */
  arm(): void {
    this.phase = 'attack';
    for (const m of this.members) m.assignsAtArm = m.last?.assigns ?? 0;
  }

  /** Assignments the members received after `arm()` (each rebalance gives every member one). */
  get rebalancesSinceArm(): number {
    return Math.max(0, ...this.members.map((m) => (m.last?.assigns ?? 0) - m.assignsAtArm));
  }

  get groupErrors(): { errors: number; lastError: string } {
    return {
      errors: this.members.reduce((n, m) => n + (m.last?.errors ?? 0), 0),
      lastError: this.members.map((m) => m.last?.lastError ?? '').find((e) => e !== '') ?? '',
    };
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.children.map(async (c) => {
        if (c.exitCode !== null || c.signalCode !== null) return;
        const exited = once(c, 'exit');
        c.kill('SIGTERM');
        const timer = setTimeout(() => c.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(timer);
      }),
    );
  }

  /** For the exit hook. */
  killNow(): void {
    for (const c of this.children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  }
}
