/**
 * What a client measures about itself for KIP-714 telemetry: plain numbers updated in place
 * (no allocation per request), read when a push is due. A latency window holds count, sum and
 * max since the last push, as Kafka's clients report `*.avg` / `*.max` over their sample window;
 * the push reads and resets it. A Cluster owns one ClientStats; Connection, Producer, Fetcher
 * and Consumer add to it where they already have the numbers at hand.
 */

/** Count, sum and maximum of observations since the last `take()`. */
export class LatencyWindow {
  count = 0;
  sum = 0;
  max = 0;

  record(ms: number): void {
    this.count++;
    this.sum += ms;
    if (ms > this.max) this.max = ms;
  }

  /** The window's average and maximum (null when nothing was observed), and a fresh window. */
  take(): { avg: number; max: number } | null {
    if (this.count === 0) return null;
    const out = { avg: this.sum / this.count, max: this.max };
    this.count = 0;
    this.sum = 0;
    this.max = 0;
    return out;
  }
}

/**
 * The share of time a consumer spends inside poll() (Kafka's poll-idle-ratio-avg: near 1 when the
 * application keeps up, near 0 when its processing between polls dominates), averaged per poll.
 */
export class PollIdleRatio {
  private pollStartedAt = -1;
  private pollEndedAt = -1;
  private readonly ratios = new LatencyWindow();

  pollStarted(now: number): void {
    this.pollStartedAt = now;
  }

  pollEnded(now: number): void {
    if (this.pollStartedAt < 0) return;
    const inPoll = now - this.pollStartedAt;
    const total = this.pollEndedAt < 0 ? inPoll : now - this.pollEndedAt;
    if (total > 0) this.ratios.record(inPoll / total);
    this.pollEndedAt = now;
  }

  take(): number | null {
    return this.ratios.take()?.avg ?? null;
  }
}

export class ClientStats {
  /** Connections this client opened (Kafka's connection-creation-total). */
  connectionCreations = 0;
  /** Request latency per broker address (host:port); resolved to node ids when collected. */
  readonly requestLatency = new Map<string, LatencyWindow>();
  /** Producer: how long batches waited in the accumulator before a Produce request took them. */
  readonly recordQueueTime = new LatencyWindow();
  /** Producer: the throttle time brokers reported in Produce responses. */
  readonly produceThrottleTime = new LatencyWindow();
  /** Consumer: Fetch round trips. */
  readonly fetchLatency = new LatencyWindow();
  /** Consumer: OffsetCommit round trips (commitSync, auto-commit). */
  readonly commitLatency = new LatencyWindow();
  readonly pollIdle = new PollIdleRatio();
  /** Consumer: partitions assigned now; set by the consumer, read when collected. */
  assignedPartitions: (() => number) | null = null;

  private firstConnectionListeners: (() => void)[] | null = [];

  /** A connection of this client is open (counted; the first one starts telemetry). */
  connectionOpened(): void {
    this.connectionCreations++;
    const listeners = this.firstConnectionListeners;
    this.firstConnectionListeners = null;
    if (listeners !== null) for (const l of listeners) l();
  }

  /**
   * Runs `fn` once this client has opened a connection by itself: telemetry never opens the
   * first one (a client that cannot connect, or is refused authentication, gets no extra attempt).
   */
  onFirstConnection(fn: () => void): void {
    if (this.firstConnectionListeners === null) fn();
    else this.firstConnectionListeners.push(fn);
  }

  /** The latency window of one broker address, created on its first connection. */
  latencyOf(address: string): LatencyWindow {
    let w = this.requestLatency.get(address);
    if (w === undefined) {
      w = new LatencyWindow();
      this.requestLatency.set(address, w);
    }
    return w;
  }
}
