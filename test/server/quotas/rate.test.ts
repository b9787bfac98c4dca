import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SampledRate, recordAndThrottleMs } from '../../../src/server/quotas/rate.js';

const KAFKA = { samples: 11, windowMs: 1000 };

test('a new rate divides by samples - 1 full windows, not by the time since its first value', () => {
  const r = new SampledRate(KAFKA);
  r.record(1000, 0);
  assert.equal(r.windowSizeMs(0), 10_000);
  assert.equal(r.measure(0), 100);
  assert.equal(r.windowSizeMs(500), 10_500);
  assert.ok(Math.abs(r.measure(500) - 1000 / 10.5) < 1e-9);
});

test('windows advance after windowMs and the elapsed time counts once past samples - 1 windows', () => {
  const r = new SampledRate(KAFKA);
  for (let t = 0; t <= 10_000; t += 1000) r.record(100, t);
  // 11 windows, the oldest started at 0: elapsed 10.5 s is more than 10 full windows.
  assert.equal(r.windowSizeMs(10_500), 10_500);
  assert.ok(Math.abs(r.measure(10_500) - 1100 / 10.5) < 1e-9);
});

test('samples older than samples × windowMs are forgotten', () => {
  const r = new SampledRate(KAFKA);
  r.record(5000, 0);
  assert.ok(r.measure(10_999) > 0);
  assert.equal(r.measure(11_000), 0);
});

test('throttle time is (rate - bound) / bound × window size, as Kafka QuotaUtils.throttleTime', () => {
  const r = new SampledRate(KAFKA);
  assert.equal(recordAndThrottleMs(r, 1000, 10_000, 0), 0); // exactly at the bound: 10000 / 10 s
  // 20000 over 10 s = 2000/s: twice the bound, a whole window size to wait.
  assert.equal(recordAndThrottleMs(r, 1000, 10_000, 0), 10_000);
  const r2 = new SampledRate(KAFKA);
  r2.record(1000, 0);
  // 12000 over 10.2 s (first window 200 ms old + 10 assumed) = 1176.47/s: (1176.47 - 1000) / 1000 × 10200 = 1800 ms.
  assert.equal(recordAndThrottleMs(r2, 1000, 11_000, 200), 1800);
});

test('a negative value takes back what was recorded (the throttled fetch)', () => {
  const r = new SampledRate(KAFKA);
  r.record(20_000, 0);
  r.record(-20_000, 0);
  assert.equal(r.measure(0), 0);
});

test('a client that waits its throttle time is held at the bound over a long run', () => {
  const r = new SampledRate(KAFKA);
  const bound = 100_000;
  let now = 0;
  let sent = 0;
  while (now < 120_000) {
    sent += 10_000;
    const wait = recordAndThrottleMs(r, bound, 10_000, now);
    now += Math.max(wait, 5); // one request every 5 ms when not throttled
  }
  const rate = sent / (now / 1000);
  assert.ok(rate > bound * 0.9 && rate < bound * 1.2, `rate ${rate}`);
});
