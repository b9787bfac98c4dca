/**
 * KIP-714's client state machine against a scripted transport and a manual clock: no broker,
 * no sleeps. Each test scripts the broker's answers and checks what the client sends and when.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { TelemetryReporter, DEFAULT_PUSH_INTERVAL_MS, type TelemetryTransport } from '../../../src/client/telemetry/telemetry-reporter.js';
import type { GetTelemetrySubscriptionsResponse, PushTelemetryRequest, PushTelemetryResponse } from '../../../src/protocol/messages/index.js';
import { ZERO_UUID } from '../../../src/protocol/primitives/index.js';
import { FakeClock } from './fake-clock.js';
import { ClientStats } from '../../../src/client/telemetry/client-stats.js';

const INSTANCE = '0f0e0d0c-0b0a-4908-8706-050403020100';

function subscription(over: Partial<GetTelemetrySubscriptionsResponse> = {}): GetTelemetrySubscriptionsResponse {
  return {
    throttleTimeMs: 0,
    errorCode: 0,
    clientInstanceId: INSTANCE,
    subscriptionId: 7,
    acceptedCompressionTypes: [],
    pushIntervalMs: 10_000,
    telemetryMaxBytes: 1 << 20,
    deltaTemporality: true,
    requestedMetrics: [''],
    ...over,
  };
}

type Answer<T> = T | Error;

class ScriptedBroker implements TelemetryTransport {
  readonly log: string[] = [];
  readonly pushes: PushTelemetryRequest[] = [];
  readonly subscriptionRequests: string[] = [];
  subscriptions: Answer<GetTelemetrySubscriptionsResponse>[] = [];
  pushAnswers: Answer<number>[] = [];
  isSupported = true;
  defaultSubscription = subscription();

  async supported(): Promise<boolean> {
    return this.isSupported;
  }

  async getSubscriptions(clientInstanceId: string): Promise<GetTelemetrySubscriptionsResponse> {
    this.subscriptionRequests.push(clientInstanceId);
    this.log.push('get');
    const a = this.subscriptions.shift() ?? this.defaultSubscription;
    if (a instanceof Error) throw a;
    return a;
  }

  async push(request: PushTelemetryRequest): Promise<PushTelemetryResponse> {
    this.pushes.push(request);
    this.log.push(request.terminating ? 'push(terminating)' : 'push');
    const a = this.pushAnswers.shift() ?? 0;
    if (a instanceof Error) throw a;
    return { throttleTimeMs: 0, errorCode: a };
  }
}

function setup(over: { broker?: ScriptedBroker; events?: string[] } = {}) {
  const clock = new FakeClock();
  const broker = over.broker ?? new ScriptedBroker();
  const events = over.events ?? [];
  const payloads: { terminating: boolean; subscriptionId: number }[] = [];
  const reporter = new TelemetryReporter({
    transport: broker,
    clock,
    payload: (sub, terminating) => {
      payloads.push({ terminating, subscriptionId: sub.subscriptionId });
      return { compressionType: 0, metrics: Buffer.from('otlp') };
    },
    onEvent: (e) => events.push(e),
  });
  return { clock, broker, reporter, payloads, events };
}

test('first GetTelemetrySubscriptions carries the zero instance id, later ones the id the broker assigned', async () => {
  const { clock, broker, reporter } = setup();
  broker.pushAnswers = [117]; // subscription changed: ask again
  reporter.start();
  await clock.advance(0);
  assert.deepEqual(broker.subscriptionRequests, [ZERO_UUID]);
  assert.equal(reporter.clientInstanceId, INSTANCE);
  await clock.advance(10_000);
  assert.deepEqual(broker.subscriptionRequests, [ZERO_UUID, INSTANCE]);
  assert.equal(broker.pushes[0]!.clientInstanceId, INSTANCE);
  assert.equal(broker.pushes[0]!.subscriptionId, 7);
});

test('the first push after a subscription is jittered over 0.5-1.5 intervals, later ones come every interval', async () => {
  for (const [random, firstAt] of [
    [0, 5_000],
    [0.999, 14_990],
  ] as const) {
    const { clock, broker, reporter } = setup();
    clock.randomValue = random;
    reporter.start();
    await clock.advance(0);
    assert.equal(clock.nextDelay(), firstAt);
    await clock.advance(firstAt - 1);
    assert.equal(broker.pushes.length, 0, 'not before the jittered delay');
    await clock.advance(1);
    assert.equal(broker.pushes.length, 1);
    assert.equal(clock.nextDelay(), 10_000, 'then the plain interval');
    await clock.advance(20_000);
    assert.equal(broker.pushes.length, 3);
    assert.equal(reporter.pushes, 3);
  }
});

test('UNKNOWN_SUBSCRIPTION_ID and UNSUPPORTED_COMPRESSION_TYPE re-subscribe at once and push with the new subscription', async () => {
  for (const code of [117, 76]) {
    const { clock, broker, reporter } = setup();
    broker.subscriptions = [subscription(), subscription({ subscriptionId: 8, pushIntervalMs: 2_000 })];
    broker.pushAnswers = [code];
    reporter.start();
    await clock.advance(10_000);
    assert.deepEqual(broker.log, ['get', 'push', 'get'], `error ${code}`);
    assert.equal(reporter.subscription?.subscriptionId, 8);
    await clock.advance(2_000);
    assert.equal(broker.pushes.at(-1)!.subscriptionId, 8);
  }
});

test('INVALID_RECORD / INVALID_REQUEST from a push stop telemetry for good', async () => {
  for (const code of [87, 42]) {
    const { clock, broker, reporter, events } = setup();
    broker.pushAnswers = [code];
    reporter.start();
    await clock.advance(10_000);
    assert.equal(reporter.state, 'terminated');
    assert.equal(clock.pending(), 0, 'no timer left');
    assert.match(events.join('\n'), new RegExp(`error ${code}`));
    await reporter.close();
    assert.deepEqual(broker.log, ['get', 'push'], 'no terminating push after being disabled');
  }
});

test('THROTTLING_QUOTA_EXCEEDED and TELEMETRY_TOO_LARGE keep the subscription and push again an interval later', async () => {
  const { clock, broker, reporter } = setup();
  broker.pushAnswers = [89, 118, 0];
  reporter.start();
  await clock.advance(30_000);
  assert.deepEqual(broker.log, ['get', 'push', 'push', 'push']);
  assert.equal(reporter.pushes, 1);
});

test('a broker without the APIs: no request at all, telemetry off', async () => {
  const broker = new ScriptedBroker();
  broker.isSupported = false;
  const { clock, reporter, events } = setup({ broker });
  reporter.start();
  await clock.advance(0);
  assert.equal(reporter.state, 'terminated');
  assert.deepEqual(broker.log, []);
  assert.match(events[0]!, /does not support client telemetry/);
});

test('transport failures back off exponentially up to retry.backoff.max.ms, then recover', async () => {
  const { clock, broker, reporter } = setup();
  const down = new Error('connection refused');
  broker.subscriptions = [down, down, down, down, down, subscription()];
  reporter.start();
  const delays: (number | null)[] = [];
  await clock.advance(0);
  for (let i = 0; i < 5; i++) {
    delays.push(clock.nextDelay());
    await clock.advance(clock.nextDelay()!);
  }
  assert.deepEqual(delays, [100, 200, 400, 800, 1000], 'random 0.5 = no jitter: 100 ms doubling, capped at 1 s');
  assert.equal(reporter.state, 'push-needed');
  assert.equal(broker.subscriptionRequests.length, 6);
});

test('a push that fails in transport asks for the subscription again (another broker may answer)', async () => {
  const { clock, broker, reporter } = setup();
  broker.pushAnswers = [new Error('connection closed')];
  reporter.start();
  await clock.advance(10_000);
  await clock.advance(clock.nextDelay()!);
  assert.deepEqual(broker.log, ['get', 'push', 'get']);
  assert.equal(reporter.state, 'push-needed');
});

test('an empty RequestedMetrics pushes nothing and asks again one interval later', async () => {
  const { clock, broker, reporter } = setup();
  broker.subscriptions = [subscription({ requestedMetrics: [], pushIntervalMs: 60_000 })];
  reporter.start();
  await clock.advance(59_999);
  assert.deepEqual(broker.log, ['get']);
  await clock.advance(1);
  assert.deepEqual(broker.log, ['get', 'get']);
  await reporter.close();
  assert.deepEqual(broker.log, ['get', 'get', 'push(terminating)'], 'the second subscription asked for everything: close pushes once');
  assert.equal(broker.pushes[0]!.terminating, true);
});

test('an error answer to GetTelemetrySubscriptions waits the default interval before asking again', async () => {
  const { clock, broker, reporter } = setup();
  broker.subscriptions = [subscription({ errorCode: 89 })];
  reporter.start();
  await clock.advance(0);
  assert.equal(clock.nextDelay(), DEFAULT_PUSH_INTERVAL_MS);
  assert.equal(reporter.state, 'subscription-needed');
});

test('close sends one terminating push with the current subscription, then nothing more', async () => {
  const { clock, broker, reporter, payloads } = setup();
  reporter.start();
  await clock.advance(10_000);
  await reporter.close();
  assert.deepEqual(broker.log, ['get', 'push', 'push(terminating)']);
  assert.deepEqual(payloads.at(-1), { terminating: true, subscriptionId: 7 });
  assert.equal(reporter.state, 'terminated');
  assert.equal(clock.pending(), 0);
  await clock.advance(100_000);
  assert.equal(broker.log.length, 3);
  await reporter.close(); // twice is harmless
});

test('close before any subscription sends nothing', async () => {
  const { broker, reporter } = setup();
  reporter.start();
  await reporter.close();
  assert.deepEqual(broker.log, []);
  assert.equal(reporter.state, 'terminated');
});

test('close does not wait longer than its timeout for a broker that never answers', async () => {
  const { clock, broker, reporter } = setup();
  reporter.start();
  await clock.advance(0);
  broker.push = () => new Promise<PushTelemetryResponse>(() => undefined);
  const closing = reporter.close(3_000);
  await clock.advance(3_000);
  await closing;
  assert.equal(reporter.state, 'terminated');
});

test('close while a GetTelemetrySubscriptions hangs returns at once (a client closing with no broker answering)', async () => {
  const { clock, broker, reporter } = setup();
  broker.getSubscriptions = () => new Promise<GetTelemetrySubscriptionsResponse>(() => undefined);
  reporter.start();
  await clock.advance(0);
  assert.equal(reporter.state, 'subscription-in-progress');
  await reporter.close(60_000); // the fake clock never advances: this returns only if close does not wait
  assert.equal(reporter.state, 'terminated');
  assert.deepEqual(broker.log, []);
});

test('a refused login (SASL_AUTHENTICATION_FAILED) stops telemetry instead of logging in again and again', async () => {
  const { clock, broker, reporter, events } = setup();
  broker.subscriptions = [Object.assign(new Error('Authentication failed: Invalid username or password'), { code: 58 })];
  reporter.start();
  await clock.advance(0);
  assert.equal(reporter.state, 'terminated');
  assert.equal(clock.pending(), 0);
  assert.match(events.join('\n'), /telemetry disabled: Authentication failed/);
});

test('telemetry starts only once the client itself opened a connection', () => {
  const stats = new ClientStats();
  const started: string[] = [];
  stats.onFirstConnection(() => started.push('a'));
  assert.equal(started.length, 0);
  stats.connectionOpened();
  stats.connectionOpened();
  assert.deepEqual(started, ['a'], 'once');
  stats.onFirstConnection(() => started.push('b'));
  assert.deepEqual(started, ['a', 'b'], 'already connected: at once');
  assert.equal(stats.connectionCreations, 2);
});
