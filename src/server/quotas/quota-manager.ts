/**
 * Kafka's ClientQuotaManager / ClientRequestQuotaManager: one per quota type (produce bytes,
 * fetch bytes, request time), each measuring a SampledRate per sharing group (resolver.ts) and
 * answering how long a client must be throttled.
 *
 * Cost when no quota of a type is configured: one boolean test (Kafka records nothing either
 * then). When some are, the resolution of a (user, client id) pair is cached until any client
 * entity changes (an AlterClientQuotas, a kafka-configs --zookeeper write seen on /config/changes),
 * so changes reach running connections at their next request.
 */
import type { KafkaPrincipal } from '../../security/principal.js';
import type { ClientEntityConfigStore } from '../../metadata/client-entity-configs.js';
import { CONSUMER_BYTE_RATE, PRODUCER_BYTE_RATE, REQUEST_PERCENTAGE } from '../../config/quota-configs.js';
import { resolveQuota, type ResolvedQuota } from './resolver.js';
import { SampledRate, recordAndThrottleMs, type RateWindowConfig } from './rate.js';

export type QuotaType = 'produce' | 'fetch' | 'request';

export const QUOTA_KEY: Readonly<Record<QuotaType, string>> = {
  produce: PRODUCER_BYTE_RATE,
  fetch: CONSUMER_BYTE_RATE,
  request: REQUEST_PERCENTAGE,
};

/** One sharing group's measure (Kafka's per user / client-id quota sensors), read by server/metrics too. */
export interface QuotaSensor {
  readonly user: string;
  readonly clientId: string;
  readonly rate: SampledRate;
  lastRecordMs: number;
  /** The throttle time the last recorded request got (ms; 0: within quota), and all of them added up. */
  throttleMs: number;
  throttleMsTotal: number;
}
type Sensor = QuotaSensor;

const MAX_CACHED_RESOLUTIONS = 100_000;

/** Sensors idle this long are dropped (Kafka's inactive sensor expiry: 1 hour). */
const SENSOR_EXPIRY_MS = 3_600_000;

export class ClientQuotaManager {
  private enabled = false;
  /** Cached resolutions: principal name → client id → quota (null: none). */
  private readonly resolved = new Map<string, Map<string, ResolvedQuota | null>>();
  private resolvedCount = 0;
  private readonly sensors = new Map<string, Sensor>();
  private sensorsAtLastPrune = 0;

  constructor(
    readonly type: QuotaType,
    private readonly store: Pick<ClientEntityConfigStore, 'get' | 'entries'>,
    private readonly window: RateWindowConfig,
    private readonly clock: () => number = Date.now,
  ) {
    this.refresh();
  }

  /** Whether any entity sets this type's quota (false: every call below is a no-op). */
  get quotasEnabled(): boolean {
    return this.enabled;
  }

  /** Forgets resolutions after a client entity changed. */
  refresh(): void {
    const key = QUOTA_KEY[this.type];
    let enabled = false;
    for (const configs of this.store.entries().values()) {
      if (configs[key] !== undefined) {
        enabled = true;
        break;
      }
    }
    this.enabled = enabled;
    this.resolved.clear();
    this.resolvedCount = 0;
  }

  /** The quota applying to this principal and client id; undefined = unlimited. */
  quotaFor(principal: KafkaPrincipal, clientId: string): ResolvedQuota | undefined {
    if (!this.enabled) return undefined;
    let byClient = this.resolved.get(principal.name);
    let q = byClient?.get(clientId);
    if (q === undefined) {
      q = resolveQuota((p) => this.store.get(p), principal.name, clientId, QUOTA_KEY[this.type]) ?? null;
      if (this.resolvedCount >= MAX_CACHED_RESOLUTIONS) {
        this.resolved.clear(); // many client ids: start over rather than grow
        this.resolvedCount = 0;
        byClient = undefined;
      }
      if (byClient === undefined) this.resolved.set(principal.name, (byClient = new Map()));
      byClient.set(clientId, q);
      this.resolvedCount++;
    }
    return q ?? undefined;
  }

  /** Records `value` (bytes, or percent-seconds of handler time) and returns the throttle time in ms (0: within quota). */
  recordAndGetThrottleTimeMs(principal: KafkaPrincipal, clientId: string, value: number, nowMs?: number): number {
    if (!this.enabled) return 0;
    const q = this.quotaFor(principal, clientId);
    if (q === undefined) return 0;
    const now = nowMs ?? this.clock();
    const sensor = this.sensor(q, now);
    const ms = recordAndThrottleMs(sensor.rate, q.bound, value, now);
    sensor.throttleMs = ms;
    sensor.throttleMsTotal += ms;
    return ms;
  }

  /** The live sensors (quota metrics: throttle time and rate per user / client id). */
  sensorList(): IterableIterator<QuotaSensor> {
    return this.sensors.values();
  }

  /** Takes back a recorded value (a throttled fetch answers nothing, as Kafka's unrecordQuotaSensor). */
  unrecord(principal: KafkaPrincipal, clientId: string, value: number, nowMs?: number): void {
    if (!this.enabled) return;
    const q = this.quotaFor(principal, clientId);
    if (q === undefined) return;
    const now = nowMs ?? this.clock();
    this.sensor(q, now).rate.record(-value, now);
  }

  /** The most a quota allows over the measured windows (Kafka caps fetch.max.bytes with it); Infinity = no quota. */
  maxValueInQuotaWindow(principal: KafkaPrincipal, clientId: string): number {
    const q = this.quotaFor(principal, clientId);
    if (q === undefined) return Infinity;
    return q.bound * (this.window.samples - 1) * (this.window.windowMs / 1000);
  }

  private sensor(q: ResolvedQuota, nowMs: number): Sensor {
    const key = `${q.sensorUser}\u0000${q.sensorClientId}`;
    let s = this.sensors.get(key);
    if (s === undefined) {
      s = { user: q.sensorUser, clientId: q.sensorClientId, rate: new SampledRate(this.window), lastRecordMs: nowMs, throttleMs: 0, throttleMsTotal: 0 };
      this.sensors.set(key, s);
      if (this.sensors.size >= this.sensorsAtLastPrune * 2 + 1024) this.prune(nowMs);
    }
    s.lastRecordMs = nowMs;
    return s;
  }

  private prune(nowMs: number): void {
    for (const [k, s] of this.sensors) if (nowMs - s.lastRecordMs >= SENSOR_EXPIRY_MS) this.sensors.delete(k);
    this.sensorsAtLastPrune = this.sensors.size;
  }
}

/** The three managers a broker keeps, refreshed on every client entity change. */
export class QuotaManagers {
  readonly produce: ClientQuotaManager;
  readonly fetch: ClientQuotaManager;
  readonly request: ClientQuotaManager;

  constructor(store: ClientEntityConfigStore, window: RateWindowConfig, clock: () => number = Date.now) {
    this.produce = new ClientQuotaManager('produce', store, window, clock);
    this.fetch = new ClientQuotaManager('fetch', store, window, clock);
    this.request = new ClientQuotaManager('request', store, window, clock);
    store.onChange(() => {
      this.produce.refresh();
      this.fetch.refresh();
      this.request.refresh();
    });
  }
}
