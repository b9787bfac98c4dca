/**
 * KIP-714's client state machine, as Kafka's ClientTelemetryReporter runs it: ask for a
 * subscription (GetTelemetrySubscriptions, instance id zero the first time, the broker's
 * afterwards), push at the subscription's interval (the first push after a subscription at a
 * random 0.5-1.5 of it, so clients started together do not push together), ask again when the
 * broker says the subscription changed (UNKNOWN_SUBSCRIPTION_ID) or the codec is refused, stop
 * for good on INVALID_REQUEST / INVALID_RECORD or a broker without the APIs, back off on
 * transport errors, and on close send one terminating push. Time, timers and the randomness
 * are injected, the network is a TelemetryTransport: the unit tests drive it without sleeping.
 */
import { ErrorCode } from '../../protocol/errors.js';
import type { GetTelemetrySubscriptionsResponse, PushTelemetryRequest, PushTelemetryResponse } from '../../protocol/messages/index.js';
import { ZERO_UUID } from '../../protocol/primitives/index.js';

export const TelemetryError = {
  UNKNOWN_SUBSCRIPTION_ID: 117,
  TELEMETRY_TOO_LARGE: 118,
} as const;

/** Kafka's default push interval, used to wait after an error when no subscription says otherwise. */
export const DEFAULT_PUSH_INTERVAL_MS = 300_000;

/**
 * Errors a retry cannot fix: authentication or authorization refused (SASL_AUTHENTICATION_FAILED,
 * UNSUPPORTED_SASL_MECHANISM, ILLEGAL_SASL_STATE, CLUSTER_AUTHORIZATION_FAILED). Telemetry stops
 * rather than open connection after connection that the broker counts as failed logins.
 */
const REFUSALS: ReadonlySet<number> = new Set([58, 33, 34, 31]);

function isRefusal(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' && REFUSALS.has(code);
}

export interface TelemetryTransport {
  /** False when the broker does not advertise GetTelemetrySubscriptions and PushTelemetry. */
  supported(): Promise<boolean>;
  getSubscriptions(clientInstanceId: string): Promise<GetTelemetrySubscriptionsResponse>;
  push(request: PushTelemetryRequest): Promise<PushTelemetryResponse>;
}

export interface TelemetryClock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  /** In [0, 1): the first push's jitter and the backoff's. */
  random(): number;
}

export const systemClock: TelemetryClock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref(); // telemetry never keeps a process alive
    return t;
  },
  clearTimeout: (h) => clearTimeout(h as NodeJS.Timeout),
  random: () => Math.random(),
};

export interface Subscription {
  clientInstanceId: string;
  subscriptionId: number;
  acceptedCompressionTypes: number[];
  pushIntervalMs: number;
  telemetryMaxBytes: number;
  deltaTemporality: boolean;
  requestedMetrics: string[];
}

/** The payload of one push: compressed metrics and the codec used. */
export interface Payload {
  compressionType: number;
  metrics: Buffer;
}

export type TelemetryState =
  | 'subscription-needed'
  | 'subscription-in-progress'
  | 'push-needed'
  | 'push-in-progress'
  | 'terminating-push-in-progress'
  | 'terminated';

export interface ReporterOptions {
  transport: TelemetryTransport;
  /** Builds the payload for a push (metrics filtered per the subscription, encoded, compressed). */
  payload: (subscription: Subscription, terminating: boolean) => Payload;
  clock?: TelemetryClock;
  /** retry.backoff.ms and retry.backoff.max.ms: transport errors back off exponentially between them. */
  retryBackoffMs?: number;
  retryBackoffMaxMs?: number;
  /** Why telemetry stopped or failed, for the client's log (default: nothing). */
  onEvent?: (event: string) => void;
}

export class TelemetryReporter {
  private stateNow: TelemetryState = 'subscription-needed';
  private subscriptionNow: Subscription | null = null;
  private instanceId = ZERO_UUID;
  private timer: unknown = null;
  private failures = 0;
  private inFlight: Promise<void> | null = null;
  private readonly clock: TelemetryClock;
  /** Pushes the broker accepted (diagnostics and tests). */
  pushes = 0;

  constructor(private readonly options: ReporterOptions) {
    this.clock = options.clock ?? systemClock;
  }

  get state(): TelemetryState {
    return this.stateNow;
  }

  get subscription(): Subscription | null {
    return this.subscriptionNow;
  }

  /** The broker-assigned client instance id (Kafka's clientInstanceId()), zero until known. */
  get clientInstanceId(): string {
    return this.instanceId;
  }

  start(): void {
    if (this.stateNow === 'subscription-needed' && this.timer === null && this.inFlight === null) this.schedule(0, () => this.requestSubscription());
  }

  /**
   * Sends the terminating push (when a subscription asks for metrics), waiting at most
   * `timeoutMs` for it and for a push in flight, then stops for good. A subscription request in
   * flight is not waited for (a client closing while no broker answers must not wait on it).
   */
  async close(timeoutMs = 5000): Promise<void> {
    if (this.stateNow === 'terminated') return;
    this.cancelTimer();
    const deadline = this.clock.now() + timeoutMs;
    if (this.stateNow === 'push-in-progress' && this.inFlight !== null) await this.within(this.inFlight, timeoutMs);
    const sub = this.subscriptionNow;
    const stillPushing = this.stateNow === 'push-needed' || this.stateNow === 'push-in-progress';
    if (sub !== null && sub.requestedMetrics.length > 0 && stillPushing) {
      this.stateNow = 'terminating-push-in-progress';
      await this.within(
        this.send(sub, true).catch(() => undefined),
        Math.max(0, deadline - this.clock.now()),
      );
    }
    this.terminate();
  }

  private async within(work: Promise<unknown>, ms: number): Promise<void> {
    let handle: unknown = null;
    await Promise.race([work.catch(() => undefined), new Promise<void>((resolve) => (handle = this.clock.setTimeout(resolve, ms)))]);
    this.clock.clearTimeout(handle);
  }

  private terminate(reason?: string): void {
    this.cancelTimer();
    this.stateNow = 'terminated';
    if (reason !== undefined) this.options.onEvent?.(reason);
  }

  private cancelTimer(): void {
    if (this.timer !== null) this.clock.clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(ms: number, step: () => Promise<void>): void {
    this.cancelTimer();
    this.timer = this.clock.setTimeout(() => {
      this.timer = null;
      if (this.stateNow === 'terminated' || this.stateNow === 'terminating-push-in-progress') return;
      this.inFlight = step().finally(() => (this.inFlight = null));
    }, ms);
  }

  /** Exponential backoff for transport failures, with Kafka's ±20% jitter. */
  private backoffMs(): number {
    const base = this.options.retryBackoffMs ?? 100;
    const max = this.options.retryBackoffMaxMs ?? 1000;
    const exp = Math.min(max, base * 2 ** Math.min(this.failures - 1, 30));
    return Math.round(exp * (0.8 + 0.4 * this.clock.random()));
  }

  private retryLater(step: () => Promise<void>, err: unknown): void {
    this.failures++;
    this.options.onEvent?.(`telemetry request failed, retrying: ${(err as Error).message}`);
    this.schedule(this.backoffMs(), step);
  }

  private async requestSubscription(): Promise<void> {
    this.stateNow = 'subscription-in-progress';
    let resp: GetTelemetrySubscriptionsResponse;
    try {
      if (!(await this.options.transport.supported())) return this.terminate('the broker does not support client telemetry (KIP-714)');
      resp = await this.options.transport.getSubscriptions(this.instanceId);
    } catch (err) {
      if (this.isClosing()) return;
      if (isRefusal(err)) return this.terminate(`telemetry disabled: ${(err as Error).message}`);
      this.stateNow = 'subscription-needed';
      return this.retryLater(() => this.requestSubscription(), err);
    }
    if (this.isClosing()) return;
    this.failures = 0;
    const code = resp.errorCode;
    if (code === ErrorCode.INVALID_REQUEST || code === ErrorCode.INVALID_RECORD || code === ErrorCode.UNSUPPORTED_VERSION)
      return this.terminate(`telemetry disabled: GetTelemetrySubscriptions answered error ${code}`);
    if (code !== 0) {
      this.stateNow = 'subscription-needed';
      this.schedule(this.subscriptionNow?.pushIntervalMs || DEFAULT_PUSH_INTERVAL_MS, () => this.requestSubscription());
      return;
    }
    if (resp.clientInstanceId !== ZERO_UUID) this.instanceId = resp.clientInstanceId;
    const sub: Subscription = {
      clientInstanceId: this.instanceId,
      subscriptionId: resp.subscriptionId,
      acceptedCompressionTypes: resp.acceptedCompressionTypes,
      pushIntervalMs: resp.pushIntervalMs > 0 ? resp.pushIntervalMs : DEFAULT_PUSH_INTERVAL_MS,
      telemetryMaxBytes: resp.telemetryMaxBytes,
      deltaTemporality: resp.deltaTemporality,
      requestedMetrics: resp.requestedMetrics,
    };
    this.subscriptionNow = sub;
    if (sub.requestedMetrics.length === 0) {
      // Nothing asked for: look again one interval later, in case an operator subscribed us.
      this.stateNow = 'subscription-needed';
      this.schedule(sub.pushIntervalMs, () => this.requestSubscription());
      return;
    }
    this.stateNow = 'push-needed';
    this.schedule(Math.round(sub.pushIntervalMs * (0.5 + this.clock.random())), () => this.push());
  }

  private isClosing(): boolean {
    return this.stateNow === 'terminated' || this.stateNow === 'terminating-push-in-progress';
  }

  private async push(): Promise<void> {
    const sub = this.subscriptionNow;
    if (sub === null) return this.requestSubscription();
    this.stateNow = 'push-in-progress';
    let code: number;
    try {
      code = await this.send(sub, false);
    } catch (err) {
      if (this.isClosing()) return;
      // The connection may have changed broker: a new one knows our instance, not our push.
      this.stateNow = 'subscription-needed';
      return this.retryLater(() => this.requestSubscription(), err);
    }
    if (this.isClosing()) return;
    this.failures = 0;
    if (code === 0 || code === ErrorCode.THROTTLING_QUOTA_EXCEEDED || code === TelemetryError.TELEMETRY_TOO_LARGE) {
      if (code === TelemetryError.TELEMETRY_TOO_LARGE) this.options.onEvent?.('telemetry push refused: larger than the broker accepts');
      this.stateNow = 'push-needed';
      this.schedule(sub.pushIntervalMs, () => this.push());
    } else if (code === TelemetryError.UNKNOWN_SUBSCRIPTION_ID || code === ErrorCode.UNSUPPORTED_COMPRESSION_TYPE) {
      this.stateNow = 'subscription-needed';
      this.schedule(0, () => this.requestSubscription());
    } else if (code === ErrorCode.INVALID_REQUEST || code === ErrorCode.INVALID_RECORD) {
      this.terminate(`telemetry disabled: PushTelemetry answered error ${code}`);
    } else {
      this.stateNow = 'subscription-needed';
      this.schedule(sub.pushIntervalMs, () => this.requestSubscription());
    }
  }

  /** One PushTelemetry; resolves with its error code. */
  private async send(sub: Subscription, terminating: boolean): Promise<number> {
    const payload = this.options.payload(sub, terminating);
    const resp = await this.options.transport.push({
      clientInstanceId: sub.clientInstanceId,
      subscriptionId: sub.subscriptionId,
      terminating,
      compressionType: payload.compressionType,
      metrics: payload.metrics,
    });
    if (resp.errorCode === 0) this.pushes++;
    return resp.errorCode;
  }
}
