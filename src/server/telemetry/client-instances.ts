/**
 * KIP-714 on the broker (Kafka 4.0's ClientMetricsManager): client instances, their matching
 * subscriptions, and the checks GetTelemetrySubscriptions and PushTelemetry answer with.
 *
 * - A zero client instance id gets a new random one; an instance remembers the subscriptions
 *   that matched it (metrics, the lowest interval.ms) and a subscription id computed from them
 *   (CRC32C of the metric set and interval, xor a hash of the instance id). Any change to the
 *   client-metrics resources bumps a version; an instance older than it is re-matched at its
 *   next request, so a push with the old subscription id gets UNKNOWN_SUBSCRIPTION_ID.
 * - A GetTelemetrySubscriptions sooner than the push interval after the last request is
 *   THROTTLING_QUOTA_EXCEEDED unless the last error was UNKNOWN_SUBSCRIPTION_ID or
 *   UNSUPPORTED_COMPRESSION_TYPE; a push is throttled likewise (the first push after a Get is
 *   always accepted: clients jitter the interval). A push after a terminating push is
 *   INVALID_REQUEST; a reserved instance id is INVALID_REQUEST; an unknown compression type
 *   UNSUPPORTED_COMPRESSION_TYPE; more than telemetry.max.bytes TELEMETRY_TOO_LARGE (compressed
 *   or decompressed); a payload that is not OTLP INVALID_RECORD.
 * - Instances live 3 push intervals (at least 60 s) after their last request, at most 16,384
 *   (least recently used first out), as Kafka's cache.
 *
 * The decoded payload goes to PushedMetrics (pushed-metrics.ts), which the metrics endpoint reads.
 */
import { crc32c } from '@node-rs/crc32';
import type { Logger } from 'pino';
import { ErrorCode } from '../../protocol/errors.js';
import { decodeMetricsData, type MetricsData } from '../../protocol/otlp/index.js';
import { ZERO_UUID, randomUuid } from '../../protocol/primitives/index.js';
import { CompressionType } from '../../protocol/records/batch-header.js';
import { decompressBoundedAsync, DecompressionLimitError } from '../../protocol/records/compression/bounded.js';
import { isKnownCompression } from '../../protocol/records/compression/index.js';
import { ALL_SUBSCRIBED_METRICS, INTERVAL_MS_DEFAULT, parseSubscription, type MatchSelector, type Subscription } from './client-metrics-configs.js';
import type { ClientMetricsResources } from './client-metrics-resources.js';

// Kafka's codes, not (yet) among protocol/errors.ts's named constants.
export const UNKNOWN_SUBSCRIPTION_ID = 117;
export const TELEMETRY_TOO_LARGE = 118;

/** Kafka's Uuid.RESERVED: the zero id and the metadata topic's id. */
const RESERVED_IDS = new Set([ZERO_UUID, 'AAAAAAAAAAAAAAAAAAAAAQ']);
/** What the broker accepts, in Kafka's order of preference (none is always accepted). */
export const ACCEPTED_COMPRESSION_TYPES: readonly number[] = [CompressionType.Zstd, CompressionType.Lz4, CompressionType.Gzip, CompressionType.Snappy];
/** Kafka's error response to a throttled Get: the code alone, every other field at its default. */
const THROTTLED_ANSWER = (): TelemetrySubscriptionAnswer => ({
  errorCode: ErrorCode.THROTTLING_QUOTA_EXCEEDED,
  clientInstanceId: ZERO_UUID,
  subscriptionId: 0,
  acceptedCompressionTypes: [],
  pushIntervalMs: 0,
  telemetryMaxBytes: 0,
  deltaTemporality: false,
  requestedMetrics: [],
});
const CACHE_MAX_SIZE = 16_384;
const MIN_EXPIRY_MS = 60_000;

/** Who is asking: what `match` selectors compare against. */
export interface ClientIdentity {
  clientId: string;
  softwareName: string | undefined;
  softwareVersion: string | undefined;
  sourceAddress: string;
  sourcePort: number;
}

export interface TelemetrySubscriptionAnswer {
  errorCode: number;
  clientInstanceId: string;
  subscriptionId: number;
  acceptedCompressionTypes: number[];
  pushIntervalMs: number;
  telemetryMaxBytes: number;
  deltaTemporality: boolean;
  requestedMetrics: string[];
}

export interface TelemetryPush {
  clientInstanceId: string;
  subscriptionId: number;
  terminating: boolean;
  compressionType: number;
  metrics: Buffer;
}

/** Where accepted pushes go (pushed-metrics.ts). */
export interface TelemetrySink {
  record(instance: { clientInstanceId: string; clientId: string; pushIntervalMs: number }, data: MetricsData, now: number): void;
  forget(clientInstanceId: string): void;
}

class ClientInstance {
  lastGetAt = 0;
  lastPushAt = 0;
  /** A Get was accepted after the last accepted push (Kafka compares the two timestamps; equal ms must not lose it). */
  getSinceLastPush = false;
  lastKnownError: number = ErrorCode.NONE;
  terminating = false;
  expiresAt = 0;

  constructor(
    readonly id: string,
    readonly identity: ClientIdentity,
    readonly subscriptionId: number,
    readonly version: number,
    readonly metrics: readonly string[],
    readonly pushIntervalMs: number,
  ) {}

  /** A Get is accepted once an interval has passed since the last Get or push. */
  acceptGet(now: number): boolean {
    if (now - Math.max(this.lastGetAt, this.lastPushAt) < this.pushIntervalMs) return false;
    this.lastGetAt = now;
    this.getSinceLastPush = true;
    return true;
  }

  /** A push is accepted right after a Get (clients jitter the interval), else once an interval has passed. */
  acceptPush(now: number): boolean {
    const accept = this.getSinceLastPush || now - this.lastPushAt >= this.pushIntervalMs;
    if (accept) {
      this.lastPushAt = now;
      this.getSinceLastPush = false;
    }
    return accept;
  }
}

export interface ClientTelemetryOptions {
  /** telemetry.max.bytes. */
  telemetryMaxBytes: number;
  sink: TelemetrySink;
  logger: Logger;
  /** Test seam: the clock (ms). */
  now?: () => number;
}

export class ClientTelemetry {
  /** Insertion order is recency order: a touched instance is re-inserted (LRU). */
  private readonly instances = new Map<string, ClientInstance>();
  private subscriptions: Subscription[] = [];
  private version = 0;
  private lastSweep = Number.NEGATIVE_INFINITY;
  private readonly now: () => number;

  constructor(
    private readonly resources: ClientMetricsResources,
    private readonly opts: ClientTelemetryOptions,
  ) {
    this.now = opts.now ?? Date.now;
    this.reloadSubscriptions();
    resources.onChange(() => this.reloadSubscriptions());
  }

  /** Client instances known now (Kafka's client-metrics instance-count). */
  get instanceCount(): number {
    this.expire(this.now(), true);
    return this.instances.size;
  }

  /** The names of the client-metrics resources (ListClientMetricsResources). */
  resourceNames(): string[] {
    return [...this.resources.entries().keys()];
  }

  getSubscriptions(requestedId: string, identity: ClientIdentity): TelemetrySubscriptionAnswer {
    const now = this.now();
    const id = requestedId === ZERO_UUID ? this.newInstanceId() : requestedId;
    const instance = this.instanceFor(id, identity, now);
    const answer: TelemetrySubscriptionAnswer = {
      errorCode: ErrorCode.NONE,
      clientInstanceId: id,
      subscriptionId: instance.subscriptionId,
      acceptedCompressionTypes: [...ACCEPTED_COMPRESSION_TYPES],
      pushIntervalMs: instance.pushIntervalMs,
      telemetryMaxBytes: this.opts.telemetryMaxBytes,
      deltaTemporality: true,
      requestedMetrics: [...instance.metrics],
    };
    const exempt = instance.lastKnownError === UNKNOWN_SUBSCRIPTION_ID || instance.lastKnownError === ErrorCode.UNSUPPORTED_COMPRESSION_TYPE;
    if (!instance.acceptGet(now) && !exempt) {
      return THROTTLED_ANSWER();
    }
    instance.lastKnownError = ErrorCode.NONE;
    return answer;
  }

  async push(req: TelemetryPush, identity: ClientIdentity): Promise<number> {
    if (RESERVED_IDS.has(req.clientInstanceId)) return ErrorCode.INVALID_REQUEST;
    const now = this.now();
    const instance = this.instanceFor(req.clientInstanceId, identity, now);
    const refusal = this.pushRefusal(instance, req, now);
    // Kafka records the request's terminating flag whatever the outcome.
    instance.terminating = req.terminating;
    if (refusal !== ErrorCode.NONE) {
      instance.lastKnownError = refusal;
      return refusal;
    }
    if (req.terminating) this.opts.sink.forget(instance.id);
    if (req.metrics.length > 0 && !req.terminating) {
      const outcome = await this.decode(req);
      if (typeof outcome === 'number') {
        instance.lastKnownError = outcome;
        return outcome;
      }
      // Unless a terminating push or expiry ended the instance while this one decompressed.
      if (this.instances.get(instance.id) === instance && !instance.terminating) {
        this.opts.sink.record({ clientInstanceId: instance.id, clientId: identity.clientId, pushIntervalMs: instance.pushIntervalMs }, outcome, now);
      }
    }
    instance.lastKnownError = ErrorCode.NONE;
    return ErrorCode.NONE;
  }

  private pushRefusal(instance: ClientInstance, req: TelemetryPush, now: number): number {
    if (instance.terminating) return ErrorCode.INVALID_REQUEST;
    if (!instance.acceptPush(now) && !req.terminating) return ErrorCode.THROTTLING_QUOTA_EXCEEDED;
    if (req.subscriptionId !== instance.subscriptionId) return UNKNOWN_SUBSCRIPTION_ID;
    if (!isKnownCompression(req.compressionType)) return ErrorCode.UNSUPPORTED_COMPRESSION_TYPE;
    if (req.metrics.length > this.opts.telemetryMaxBytes) return TELEMETRY_TOO_LARGE;
    return ErrorCode.NONE;
  }

  /** Decompressed off the event loop and bounded by telemetry.max.bytes, then decoded. */
  private async decode(req: TelemetryPush): Promise<MetricsData | number> {
    try {
      const raw = await decompressBoundedAsync(req.compressionType as CompressionType, req.metrics, this.opts.telemetryMaxBytes);
      return decodeMetricsData(raw);
    } catch (err) {
      if (err instanceof DecompressionLimitError) return TELEMETRY_TOO_LARGE;
      this.opts.logger.debug({ clientInstanceId: req.clientInstanceId, err: (err as Error).message }, 'undecodable telemetry push');
      return ErrorCode.INVALID_RECORD;
    }
  }

  private newInstanceId(): string {
    for (;;) {
      const id = randomUuid();
      if (!this.instances.has(id)) return id;
    }
  }

  /** The cached instance, re-matched when the subscriptions changed since it was made; touched (LRU, expiry). */
  private instanceFor(id: string, identity: ClientIdentity, now: number): ClientInstance {
    this.expire(now);
    let instance = this.instances.get(id);
    if (instance === undefined || instance.version < this.version) {
      instance = this.createInstance(id, instance?.identity ?? identity);
    }
    this.instances.delete(id);
    this.instances.set(id, instance);
    instance.expiresAt = now + Math.max(MIN_EXPIRY_MS, 3 * instance.pushIntervalMs);
    while (this.instances.size > CACHE_MAX_SIZE) {
      const oldest = this.instances.keys().next().value as string;
      this.instances.delete(oldest);
      this.opts.sink.forget(oldest);
    }
    return instance;
  }

  private createInstance(id: string, identity: ClientIdentity): ClientInstance {
    const attributes: Record<MatchSelector, string | undefined> = {
      client_instance_id: id,
      client_id: identity.clientId,
      client_software_name: identity.softwareName,
      client_software_version: identity.softwareVersion,
      client_source_address: identity.sourceAddress,
      client_source_port: String(identity.sourcePort),
    };
    let interval = INTERVAL_MS_DEFAULT;
    const metrics = new Set<string>();
    for (const s of this.subscriptions) {
      const matches = [...s.match].every(([selector, re]) => attributes[selector] !== undefined && re.matches(attributes[selector]));
      if (!matches) continue;
      for (const m of s.metrics) metrics.add(m);
      interval = Math.min(interval, s.intervalMs);
    }
    const list = metrics.has(ALL_SUBSCRIBED_METRICS) ? [ALL_SUBSCRIBED_METRICS] : [...metrics].sort();
    return new ClientInstance(id, identity, subscriptionIdOf(list, interval, id), this.version, list, interval);
  }

  /** Drops expired instances; a full pass at most once a second on requests, on every scrape (intervals differ, so expiry is not recency order). */
  private expire(now: number, force = false): void {
    if (!force && now - this.lastSweep < 1000) return;
    this.lastSweep = now;
    for (const [id, instance] of this.instances) {
      if (instance.expiresAt > now) continue;
      this.instances.delete(id);
      this.opts.sink.forget(id);
    }
  }

  private reloadSubscriptions(): void {
    const next: Subscription[] = [];
    for (const [name, configs] of this.resources.entries()) {
      try {
        next.push(parseSubscription(name, configs));
      } catch (err) {
        // Stored by another broker or tool that did not validate it: Kafka would have refused it.
        this.opts.logger.warn({ subscription: name, err: (err as Error).message }, 'client-metrics subscription ignored');
      }
    }
    this.subscriptions = next;
    this.version++;
  }
}

/** CRC32C of the metric set and interval, xor a hash of the instance id: changes with either. */
function subscriptionIdOf(metrics: readonly string[], intervalMs: number, instanceId: string): number {
  const crc = crc32c(Buffer.from(`[${metrics.join(', ')}]${intervalMs}`, 'utf8'));
  const idHash = crc32c(Buffer.from(instanceId, 'utf8'));
  return (crc ^ idHash) | 0;
}
