// Which accepted sockets become connections, and when: Kafka's ConnectionQuotas, as a client sees it.
//
// - max.connections.per.ip (and its overrides): a connection beyond its address's maximum is closed
//   at once, on every listener, as Kafka does.
// - max.connections (broker-wide) and listener.name.<l>.max.connections: Kafka's acceptor stops
//   accepting until a slot frees, so a new client's TCP connect succeeds (the kernel's backlog) and
//   its requests wait. Node cannot stop accepting on a listening socket, so the socket is accepted
//   and parked, unread, in a queue per listener in arrival order, and served once a slot frees.
//   The queue holds at most socket.listen.backlog.size sockets (as the kernel's backlog would);
//   beyond that a connection is closed, logged. The inter-broker listener (when there are several
//   listeners) is exempt from max.connections, as Kafka: if its connections take the broker over
//   the limit, the least recently active connection of another listener is closed to make room.
// - max.connection.creation.rate (broker-wide, inter-broker listener exempt; per listener too):
//   a new connection waits, in the same queue, until the rate measured over quota.window.num
//   windows of quota.window.size.seconds is back within it (at most one window), as Kafka's
//   acceptor does.
// - the open-file limit (fd-headroom.ts): listeners other than the inter-broker one stop at the
//   ceiling it leaves; a connection beyond it is closed at once, logged (rate-limited, with a
//   count), instead of being reset silently by libuv once descriptors run out.
import { lookup } from 'node:dns';
import { isIP } from 'node:net';
import { recordAndThrottleMs, SampledRate, type RateWindowConfig } from '../quotas/rate.js';
import { normaliseAddress, type ConnectionQuotaSettings, UNLIMITED_CONNECTIONS } from './connection-quota-config.js';
import type { CloseReason } from './close-log.js';

/** A socket accepted by a listener: waiting for its slot, admitted (counted), or gone. */
export class Ticket {
  state: 'waiting' | 'admitted' | 'gone' = 'waiting';
  /** Date.now() before which a creation-rate throttle holds it; 0 = not measured yet. */
  readyAt = 0;
  private onAdmit: (() => void) | null = null;

  constructor(
    readonly listener: string,
    readonly address: string,
    /** Destroys the socket (a waiting connection refused at shutdown). */
    readonly destroy: () => void,
  ) {}

  /** Runs `serve` once the ticket is admitted (now, if it already is); never once it is gone. */
  whenAdmitted(serve: () => void): void {
    if (this.state === 'admitted') serve();
    else if (this.state === 'waiting') this.onAdmit = serve;
  }

  admitted(): void {
    this.state = 'admitted';
    const serve = this.onAdmit;
    this.onAdmit = null;
    serve?.();
  }
}

export type Verdict = { ticket: Ticket } | { refused: CloseReason; message: string };

export interface ConnectionQuotasHost {
  /** Closes the least recently active connection on a listener other than `except` (false: none). */
  closeLeastRecentlyUsed(except: string, message: string): boolean;
}

export interface ConnectionQuotasOptions {
  listeners: readonly string[];
  /** The inter-broker listener: exempt from max.connections and the file ceiling when there are several listeners. */
  interBrokerListener?: string;
  /** socket.listen.backlog.size: connections that may wait per listener. */
  backlog: number;
  /** Client listeners' sockets allowed by the open-file limit (fd-headroom.ts); Infinity: none. */
  fileCeiling: number;
  /** Describes the file ceiling in refusals, e.g. "ulimit -n 256 leaves 112 for client connections". */
  fileCeilingText?: string;
  rateWindow: RateWindowConfig;
  now?: () => number;
}

export class ConnectionQuotas {
  private settings: ConnectionQuotaSettings;
  /** max.connections.per.ip.overrides by address: IPs at once, host names once resolved (as Kafka's InetAddress.getByName). */
  private ipOverrides = new Map<string, number>();
  private total = 0;
  /** Admitted sockets on the protected listener (in `total`; outside the open-file ceiling). */
  private protectedCount = 0;
  private readonly perListener = new Map<string, number>();
  /** Admitted and waiting sockets per address (Kafka counts per IP, on every listener). */
  private readonly perAddress = new Map<string, number>();
  private readonly waiting = new Map<string, Ticket[]>();
  private waitingCount = 0;
  private readonly brokerRate: SampledRate;
  private readonly listenerRates = new Map<string, SampledRate>();
  private timer: NodeJS.Timeout | undefined;
  /** The server is stopping: nothing more is admitted. */
  private stopped = false;
  private readonly now: () => number;

  constructor(
    private readonly opts: ConnectionQuotasOptions,
    settings: ConnectionQuotaSettings,
    private readonly host: ConnectionQuotasHost,
  ) {
    this.settings = settings;
    this.resolveOverrides();
    this.now = opts.now ?? Date.now;
    this.brokerRate = new SampledRate(opts.rateWindow);
    for (const l of opts.listeners) {
      this.perListener.set(l, 0);
      this.waiting.set(l, []);
      this.listenerRates.set(l, new SampledRate(opts.rateWindow));
    }
  }

  /** Connections counted now (admitted, on every listener). */
  get connections(): number {
    return this.total;
  }

  /** Sockets accepted and waiting for a slot or the creation rate. */
  get waitingConnections(): number {
    return this.waitingCount;
  }

  update(settings: ConnectionQuotaSettings): void {
    this.settings = settings;
    this.resolveOverrides();
    this.pump(); // a higher limit lets waiting connections in
  }

  private resolveOverrides(): void {
    const settings = this.settings;
    this.ipOverrides = new Map();
    for (const [host, max] of settings.maxConnectionsPerIpOverrides) {
      if (isIP(host) !== 0) {
        this.ipOverrides.set(host, max);
        continue;
      }
      lookup(host, { all: true }, (err, addresses) => {
        if (err !== null || this.settings !== settings) return; // unresolvable, or replaced meanwhile
        for (const a of addresses) if (!this.ipOverrides.has(normaliseAddress(a.address))) this.ipOverrides.set(normaliseAddress(a.address), max);
      });
    }
  }

  /** At accept: a ticket (admitted now, or waiting), or why the socket is refused. */
  accept(listener: string, rawAddress: string, destroy: () => void): Verdict {
    const address = normaliseAddress(rawAddress);
    const isProtected = this.isProtected(listener);
    if (!isProtected && this.clientSockets() >= this.opts.fileCeiling) {
      return {
        refused: 'open-files',
        message: `refusing connection from ${address} on ${listener}: ${this.clientSockets()} client connections are open and the open-file limit (${this.opts.fileCeilingText ?? `room for ${this.opts.fileCeiling}`}) has no room for more`,
      };
    }
    const fromAddress = this.perAddress.get(address) ?? 0;
    const max = this.ipOverrides.get(address) ?? this.settings.maxConnectionsPerIp;
    if (fromAddress >= max) {
      return {
        refused: 'max-connections-per-ip',
        message: `Rejected connection from ${address}, address already has the configured maximum of ${max} connections.`,
      };
    }
    const queue = this.waiting.get(listener)!;
    if (queue.length >= this.opts.backlog) {
      return {
        refused: 'max-connections',
        message: `refusing connection from ${address} on ${listener}: ${this.limitText(listener)} reached and ${queue.length} connections already wait (socket.listen.backlog.size)`,
      };
    }
    this.perAddress.set(address, fromAddress + 1);
    const ticket = new Ticket(listener, address, destroy);
    queue.push(ticket);
    this.waitingCount++;
    this.pump();
    return { ticket };
  }

  /** The ticket's socket closed: its place (or its wait) is given back. */
  release(ticket: Ticket): void {
    if (ticket.state === 'gone') return;
    if (ticket.state === 'waiting') {
      const queue = this.waiting.get(ticket.listener)!;
      const i = queue.indexOf(ticket);
      if (i >= 0) queue.splice(i, 1);
      this.waitingCount--;
    } else {
      this.total--;
      if (this.isProtected(ticket.listener)) this.protectedCount--;
      this.perListener.set(ticket.listener, this.perListener.get(ticket.listener)! - 1);
    }
    ticket.state = 'gone';
    const left = (this.perAddress.get(ticket.address) ?? 1) - 1;
    if (left <= 0) this.perAddress.delete(ticket.address);
    else this.perAddress.set(ticket.address, left);
    this.pump();
  }

  /** Shutdown: waiting sockets are closed (their release follows from their 'close'). */
  closeWaiting(): void {
    this.stopped = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    for (const queue of this.waiting.values()) for (const t of [...queue]) t.destroy();
  }

  /** Admits the heads of the queues while their listener has a slot and the creation rate allows. */
  private pump(): void {
    if (this.stopped) return;
    let wakeAt = Infinity;
    for (const [listener, queue] of this.waiting) {
      while (queue.length > 0) {
        const head = queue[0]!;
        const now = this.now();
        if (head.readyAt === 0) head.readyAt = now + this.throttleMs(listener, now);
        if (head.readyAt > now) {
          wakeAt = Math.min(wakeAt, head.readyAt);
          break;
        }
        if (!this.slotAvailable(listener)) break;
        queue.shift();
        this.waitingCount--;
        this.admit(head);
      }
    }
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    if (wakeAt !== Infinity) {
      this.timer = setTimeout(() => this.pump(), Math.max(1, wakeAt - this.now()));
      this.timer.unref();
    }
  }

  private admit(ticket: Ticket): void {
    const listener = ticket.listener;
    this.total++;
    this.perListener.set(listener, this.perListener.get(listener)! + 1);
    if (this.isProtected(listener)) {
      this.protectedCount++;
      // Kafka's closeExcessConnections: inter-broker connections took the broker over max.connections.
      if (this.total > this.settings.maxConnections) {
        this.host.closeLeastRecentlyUsed(
          listener,
          `max.connections ${this.settings.maxConnections} exceeded by connections on the inter-broker listener ${listener}`,
        );
      }
    }
    ticket.admitted();
  }

  private slotAvailable(listener: string): boolean {
    if (this.perListener.get(listener)! >= this.listenerLimit(listener)) return false;
    if (this.isProtected(listener)) return true;
    // As Kafka: inter-broker connections count in the total others are held to.
    return this.total < this.settings.maxConnections;
  }

  /** Kafka's recordConnectionAndGetThrottleTimeMs: the longer of the broker's and the listener's wait. */
  private throttleMs(listener: string, now: number): number {
    let ms = 0;
    const brokerRate = this.settings.maxConnectionCreationRate;
    if (!this.isProtected(listener) && brokerRate < UNLIMITED_CONNECTIONS) ms = recordAndThrottleMs(this.brokerRate, brokerRate, 1, now);
    const listenerRate = this.settings.listeners.get(listener)?.maxConnectionCreationRate ?? brokerRate;
    if (listenerRate < UNLIMITED_CONNECTIONS) ms = Math.max(ms, recordAndThrottleMs(this.listenerRates.get(listener)!, listenerRate, 1, now));
    return Math.min(ms, this.opts.rateWindow.windowMs);
  }

  private listenerLimit(listener: string): number {
    return this.settings.listeners.get(listener)?.maxConnections ?? this.settings.maxConnections;
  }

  private limitText(listener: string): string {
    const own = this.listenerLimit(listener);
    if (this.perListener.get(listener)! >= own) return `listener.name.${listener.toLowerCase()}.max.connections ${own}`;
    return `max.connections ${this.settings.maxConnections}`;
  }

  /** Kafka protects the inter-broker listener only when there is another one. */
  private isProtected(listener: string): boolean {
    return listener === this.opts.interBrokerListener && this.opts.listeners.length > 1;
  }

  /** Sockets held for listeners other than the protected one (admitted or waiting). */
  private clientSockets(): number {
    let protectedWaiting = 0;
    if (this.opts.interBrokerListener !== undefined && this.isProtected(this.opts.interBrokerListener)) {
      protectedWaiting = this.waiting.get(this.opts.interBrokerListener)?.length ?? 0;
    }
    return this.total - this.protectedCount + this.waitingCount - protectedWaiting;
  }
}
