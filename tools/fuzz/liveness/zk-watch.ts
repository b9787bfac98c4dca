/**
 * What the soak's verdict reads from ZooKeeper, polled every 250 ms by a session of its own:
 * each broker's registration (/brokers/ids/N: the session that owns it, and its czxid, Kafka's
 * broker epoch; a broker whose session expired registers again under a new one, so a change
 * can be seen however late the poll), the leader and leader epoch of every partition of the
 * load's topic, its ISR, and the controller (/controller, /controller_epoch). `arm()` takes the
 * baseline; every change after it is an event with its time.
 */
import { ZkSession } from '../../../src/metadata/zk/zk-session.js';

export interface ZkEvent {
  atMs: number;
  kind: 'session' | 'leader' | 'controller' | 'isr';
  detail: string;
}

interface Snapshot {
  owners: Map<number, string>;
  leaders: Map<number, { leader: number; epoch: number; isr: number[] }>;
  controller: string;
  controllerId: number | null;
}

const POLL_MS = 250;

export class ZkWatch {
  readonly events: ZkEvent[] = [];
  private base: Snapshot | null = null;
  private last: Snapshot | null = null;
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> = Promise.resolve();
  pollErrors = 0;

  private constructor(
    private readonly zk: ZkSession,
    private readonly brokerIds: readonly number[],
    private readonly topic: string,
  ) {}

  static async open(connect: string, brokerIds: readonly number[], topic: string): Promise<ZkWatch> {
    const zk = await ZkSession.open({ connect, sessionTimeoutMs: 30_000, connectionTimeoutMs: 20_000 });
    return new ZkWatch(zk, brokerIds, topic);
  }

  async snapshot(): Promise<Snapshot> {
    const owners = new Map<number, string>();
    for (const id of this.brokerIds) {
      const st = await this.zk.exists(`/brokers/ids/${id}`);
      owners.set(id, st ? `${st.ephemeralOwner}/${st.czxid}` : 'none');
    }
    const leaders = new Map<number, { leader: number; epoch: number; isr: number[] }>();
    for (const p of await this.zk.childrenIfExists(`/brokers/topics/${this.topic}/partitions`)) {
      const st = await this.zk.getIfExists(`/brokers/topics/${this.topic}/partitions/${p}/state`);
      if (!st) continue;
      const s = JSON.parse(st.data.toString()) as { leader: number; leader_epoch: number; isr: number[] };
      leaders.set(Number(p), { leader: s.leader, epoch: s.leader_epoch, isr: [...s.isr].sort((a, b) => a - b) });
    }
    const ctl = await this.zk.getIfExists('/controller');
    const epoch = await this.zk.getIfExists('/controller_epoch');
    const controllerId = ctl ? (JSON.parse(ctl.data.toString()) as { brokerid: number }).brokerid : null;
    const controller = controllerId !== null ? `broker ${controllerId} epoch ${epoch?.data.toString() ?? '?'}` : 'none';
    return { owners, leaders, controller, controllerId };
  }

  /** Every broker registered and every partition with a full ISR (the cluster is whole). */
  async whole(partitions: number, replicas: number): Promise<boolean> {
    const s = await this.snapshot();
    return (
      [...s.owners.values()].every((o) => o !== 'none') &&
      s.leaders.size === partitions &&
      [...s.leaders.values()].every((l) => l.leader >= 0 && l.isr.length === replicas)
    );
  }

  /** Takes the baseline and starts polling. */
  async arm(): Promise<void> {
    this.base = await this.snapshot();
    this.last = this.base;
    let busy = false;
    this.timer = setInterval(() => {
      if (busy) return; // a slow ZooKeeper: skip a tick rather than queue polls without bound
      busy = true;
      this.polling = this.poll().finally(() => (busy = false));
    }, POLL_MS);
  }

  get baseline(): Snapshot | null {
    return this.base;
  }

  private async poll(): Promise<void> {
    let s: Snapshot;
    try {
      s = await this.snapshot();
    } catch {
      this.pollErrors++;
      return;
    }
    const prev = this.last!;
    const at = Date.now();
    for (const [id, owner] of s.owners) {
      const was = prev.owners.get(id)!;
      if (owner !== was) this.events.push({ atMs: at, kind: 'session', detail: `broker ${id} registration ${was} -> ${owner}` });
    }
    for (const [p, l] of s.leaders) {
      const was = prev.leaders.get(p);
      if (!was) continue;
      // the controller bumps the leader epoch when it elects, and when it takes a dead replica out of the ISR
      if (l.leader !== was.leader)
        this.events.push({
          atMs: at,
          kind: 'leader',
          detail: `${this.topic}-${p} leader ${was.leader} (epoch ${was.epoch}) -> ${l.leader} (epoch ${l.epoch})`,
        });
      else if (l.epoch !== was.epoch)
        this.events.push({ atMs: at, kind: 'leader', detail: `${this.topic}-${p} leader ${l.leader} kept, leader epoch ${was.epoch} -> ${l.epoch}` });
      if (l.isr.join() !== was.isr.join())
        this.events.push({ atMs: at, kind: 'isr', detail: `${this.topic}-${p} ISR [${was.isr.join()}] -> [${l.isr.join()}]` });
    }
    if (s.controller !== prev.controller) this.events.push({ atMs: at, kind: 'controller', detail: `controller ${prev.controller} -> ${s.controller}` });
    this.last = s;
  }

  /** The controller at the last poll (null: none, or not polled yet). */
  get controllerId(): number | null {
    return this.last?.controllerId ?? null;
  }

  count(kind: ZkEvent['kind']): number {
    return this.events.filter((e) => e.kind === kind).length;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.polling;
    await this.zk.close().catch(() => undefined);
  }
}
