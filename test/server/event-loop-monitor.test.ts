import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { startEventLoopReport, EVENT_LOOP_REPORT_MESSAGE } from '../../src/server/event-loop-monitor.js';
import { waitFor } from '../helpers/wait-for.js';

function capture(level: string): { logger: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString().split('\n')) if (l.trim() !== '') lines.push(JSON.parse(l) as Record<string, unknown>);
      cb();
    },
  });
  return { logger: pino({ level }, stream), lines };
}

const until = (pred: () => boolean, ms: number) => waitFor('the condition', ms, pred, { pollMs: 10 });

test('at debug level the broker reports the worst event-loop delay of each interval', async () => {
  const { logger, lines } = capture('debug');
  const stop = startEventLoopReport(logger, 100);
  try {
    await until(() => lines.length >= 1, 10_000);
    const blockedFrom = Date.now();
    // 600 ms, well over the 250 ms looked for: on a busy machine part of a block can fall before
    // the interval the report measures.
    while (Date.now() - blockedFrom < 600) {
      /* hold the loop, as a hostile input would */
    }
    await until(() => lines.some((l) => (l.eventLoopDelayMaxMs as number) >= 250), 10_000);
    const line = lines.find((l) => (l.eventLoopDelayMaxMs as number) >= 250)!;
    assert.equal(line.msg, EVENT_LOOP_REPORT_MESSAGE);
    assert.ok((line.worstEventLoopDelayMs as number) >= (line.eventLoopDelayMaxMs as number));
    assert.ok((line.rssBytes as number) > 0);
    // where the memory is: the JS heap, and Buffers outside it
    assert.ok((line.heapUsedBytes as number) > 0 && (line.heapUsedBytes as number) <= (line.heapTotalBytes as number), JSON.stringify(line));
    assert.ok(typeof line.externalBytes === 'number' && typeof line.arrayBuffersBytes === 'number', JSON.stringify(line));
    // the next interval starts afresh; the worst since start stays
    const after = lines.length;
    await until(() => lines.length > after + 1, 10_000);
    const last = lines[lines.length - 1]!;
    assert.ok((last.eventLoopDelayMaxMs as number) < 250, JSON.stringify(last));
    assert.ok((last.worstEventLoopDelayMs as number) >= 250);
  } finally {
    stop();
  }
});

test('below debug level nothing runs and nothing is logged', async () => {
  const { logger, lines } = capture('info');
  const stop = startEventLoopReport(logger, 20);
  await new Promise((r) => setTimeout(r, 200)); // time for several intervals, were it running
  stop();
  assert.deepEqual(lines, []);
});
