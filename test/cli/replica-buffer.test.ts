/**
 * kafka-replica-verification.sh's comparison (replica-verification/replica-buffer.ts) on batches
 * made here: replicas that agree advance the verified offset up to the lowest high watermark,
 * a differing checksum is a line in Kafka's words, differing offsets stop the tool.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { encodeBatch } from '../../src/protocol/records/index.js';
import { ReplicaBuffer, ReplicasDivergedError } from '../../src/cli/replica-verification/replica-buffer.js';

const tp = { topic: 't', partition: 0 };
const DATE = String.raw`\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}`;

function batch(baseOffset: bigint, values: string[]): Buffer {
  return encodeBatch({
    baseOffset,
    baseTimestamp: 1000n,
    records: values.map((v, i) => ({ attributes: 0, timestampDelta: 0, offsetDelta: i, key: null, value: Buffer.from(v), headers: [] })),
  });
}

test('replicas that agree advance to the lowest high watermark; the lag is reported each interval', () => {
  let now = 0;
  const buffer = new ReplicaBuffer([tp], new Map([['t-0', 0n]]), 100, now);
  const log = Buffer.concat([batch(0n, ['a', 'b']), batch(2n, ['c']), batch(3n, ['d'])]);
  buffer.add(tp, 1, { highWatermark: 4n, records: log });
  buffer.add(tp, 2, { highWatermark: 3n, records: log.subarray(0, batch(0n, ['a', 'b']).length + batch(2n, ['c']).length) });
  const lines: string[] = [];
  now = 50;
  buffer.verify(
    (l) => lines.push(l),
    () => now,
  );
  assert.equal(buffer.offset(tp), 3n, 'verified up to replica 2 high watermark');
  assert.equal(lines.length, 0, 'no report before the interval');
  // The next round fetches from offset 3 on both: replica 2 caught up, and the interval has passed.
  buffer.add(tp, 1, { highWatermark: 4n, records: batch(3n, ['d']) });
  buffer.add(tp, 2, { highWatermark: 5n, records: Buffer.concat([batch(3n, ['d']), batch(4n, ['e'])]) });
  now = 200;
  buffer.verify(
    (l) => lines.push(l),
    () => now,
  );
  assert.equal(buffer.offset(tp), 4n);
  assert.equal(lines.length, 1);
  assert.match(lines[0]!, new RegExp(`^${DATE}: max lag is 1 for partition t-0 at offset 4 among 1 partitions$`));
});

test('a checksum mismatch is printed as Kafka prints it; differing offsets stop the verification', () => {
  const buffer = new ReplicaBuffer([tp], new Map([['t-0', 0n]]), 60000, Date.now());
  buffer.add(tp, 1, { highWatermark: 2n, records: batch(0n, ['a', 'b']) });
  buffer.add(tp, 2, { highWatermark: 2n, records: batch(0n, ['a', 'X']) });
  const lines: string[] = [];
  buffer.verify((l) => lines.push(l));
  assert.equal(lines.length, 1);
  assert.match(lines[0]!, new RegExp(`^${DATE}: partition t-0 has unmatched checksum at offset 1; replica 1's checksum \\d+; replica 2's checksum \\d+$`));
  buffer.add(tp, 1, { highWatermark: 4n, records: batch(2n, ['c', 'd']) });
  buffer.add(tp, 2, { highWatermark: 4n, records: batch(2n, ['c']) });
  assert.throws(() => buffer.verify((l) => lines.push(l)), ReplicasDivergedError);
  assert.match(lines[1]!, new RegExp(`^${DATE}: partition t-0: replica 1's offset 3 doesn't match replica 2's offset 2$`));
});
