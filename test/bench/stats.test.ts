/**
 * The statistics the single benches (bench/*.ts) take from bench/suite/stats.ts besides the
 * suite's median: nearest-rank percentiles and the "median (range)" text of repeats.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { medianWithRange, percentile } from '../../bench/suite/stats.js';

describe('bench statistics: percentiles and medians with their range', () => {
  it('takes percentiles by nearest rank, whatever the order, NaN of none', () => {
    const tens = [100, 10, 90, 20, 80, 30, 70, 40, 60, 50];
    assert.equal(percentile(tens, 50), 50);
    assert.equal(percentile(tens, 90), 90);
    assert.equal(percentile(tens, 91), 100);
    assert.equal(percentile(tens, 0), 10);
    assert.equal(percentile(tens, 100), 100);
    assert.equal(percentile([7], 99), 7);
    assert.ok(Number.isNaN(percentile([], 50)));
  });

  it('writes the median with its rounded range, and a single value alone', () => {
    assert.equal(medianWithRange([12.34, 9.6, 15.2], ' MB/s'), '12.3 MB/s (10–15)');
    assert.equal(medianWithRange([3, 1, 2, 4]), '2.5 (1–4)');
    assert.equal(medianWithRange([42.06], ' MB/s'), '42.1 MB/s');
  });
});
