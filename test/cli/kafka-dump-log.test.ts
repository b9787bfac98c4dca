import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFile, mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { OffsetCommitKeyCodec, OffsetCommitValueCodec } from '../../src/protocol/coordinator-records/index.js';
import { Writer } from '../../src/protocol/primitives/index.js';
import { makeBatch, openLog, withTempDir } from '../storage/helpers.js';
import { recordAbortedTxn } from '../../src/storage/log/aborted-txns.js';
import { CRC, CompressionType, RECORD_BATCH_OVERHEAD, computeCrc } from '../../src/protocol/records/batch-header.js';
import { gzipValueBomb } from '../helpers/read-bombs.js';
import { nodeEntry } from '../helpers/built.js';
import { REPO_ROOT } from '../helpers/repo-root.js';

const run = (...args: string[]) => spawnSync(process.execPath, [...nodeEntry('cli/kafka-dump-log'), ...args], { encoding: 'utf8' });

test('dumps batches, records and index files like DumpLogSegments', async () => {
  await withTempDir(async (dir) => {
    await mkdir(path.join(dir, 'topic-0'));
    const log = await openLog(dir, { indexIntervalBytes: 50 });
    await log.append(makeBatch(['hello']), { leaderEpoch: 0 });
    await log.append(
      makeBatch([
        { key: 'k', value: 'world' },
        { key: 'k2', value: 'again' },
      ]),
      { leaderEpoch: 3 },
    );
    await log.close();
    const seg = path.join(dir, 'topic-0', '00000000000000000000');
    const res = run('--files', `${seg}.log`, '--print-data-log');
    assert.equal(res.status, 0, res.stderr);
    const lines = res.stdout.trim().split('\n');
    assert.equal(lines[0], `Dumping ${seg}.log`);
    assert.equal(lines[1], 'Log starting offset: 0');
    assert.match(
      lines[2]!,
      /^baseOffset: 0 lastOffset: 0 count: 1 baseSequence: -1 lastSequence: -1 producerId: -1 producerEpoch: -1 partitionLeaderEpoch: 0 isTransactional: false isControl: false deleteHorizonMs: OptionalLong.empty position: 0 CreateTime: 1700000000000 size: 73 magic: 2 compresscodec: none crc: \d+ isvalid: true$/,
    );
    assert.equal(lines[3], '| offset: 0 CreateTime: 1700000000000 keySize: -1 valueSize: 5 sequence: -1 headerKeys: [] payload: hello');
    assert.match(lines[4]!, /^baseOffset: 1 lastOffset: 2 count: 2 .* partitionLeaderEpoch: 3 .* position: 73 /);
    assert.equal(lines[5], '| offset: 1 CreateTime: 1700000000000 keySize: 1 valueSize: 5 sequence: -1 headerKeys: [] key: k payload: world');
    const idx = run('--files', `${seg}.index`);
    assert.equal(idx.status, 0);
    assert.deepEqual(idx.stdout.trim().split('\n'), [`Dumping ${seg}.index`, 'offset: 2 position: 73']);
    const sanity = run('--files', `${seg}.index`, '--index-sanity-check');
    assert.match(sanity.stdout, /passed sanity check\./);
    const time = run('--files', `${seg}.timeindex`);
    assert.match(time.stdout, /timestamp: 1700000000000 offset: 0/);
  });
});

test('bad input: one clear error line and a non-zero exit, no stack trace', async () => {
  await withTempDir(async (dir) => {
    const missing = run('--files', path.join(dir, 'nope.log'));
    assert.notEqual(missing.status, 0);
    assert.equal(missing.stderr.trim().split('\n').length, 1);
    assert.doesNotMatch(missing.stderr, /at .*\.ts:\d+/);
    const noFiles = run();
    assert.notEqual(noFiles.status, 0);
    assert.match(noFiles.stderr, /--files/);
    const junk = path.join(dir, '00000000000000000000.log');
    await writeFile(junk, Buffer.alloc(500, 0x41));
    // A .log with no readable batch at all is not a segment: Kafka's "invalid bytes" line, then
    // an error (a torn tail after valid batches, as after a crash, still exits 0).
    const res = run('--files', junk);
    assert.equal(res.status, 1);
    assert.match(res.stdout, /Found 500 invalid bytes at the end/);
    assert.match(res.stderr, /^kafka-dump-log: .* is not a log segment: no record batch could be read from it\n$/);
    await mkdir(path.join(dir, 'topic-0'));
    const log = await openLog(dir);
    await log.append(makeBatch(['kept']), { leaderEpoch: 0 });
    await log.close();
    const segment = path.join(dir, 'topic-0', '00000000000000000000.log');
    await appendFile(segment, Buffer.alloc(7, 0x41));
    const torn = run('--files', segment);
    assert.equal(torn.status, 0, torn.stderr);
    assert.match(torn.stdout, /Found 7 invalid bytes at the end/);
  });
});

test('--offsets-decoder prints __consumer_offsets keys and values as JSON', async () => {
  await withTempDir(async (dir) => {
    await mkdir(path.join(dir, '__consumer_offsets-0'));
    const kw = new Writer();
    kw.int16(1);
    OffsetCommitKeyCodec.write(kw, { group: 'g1', topic: 't', partition: 2 }, 1);
    const vw = new Writer();
    vw.int16(3);
    OffsetCommitValueCodec.write(vw, { offset: 42n, leaderEpoch: 0, metadata: '', commitTimestamp: 5n }, 3);
    const { LocalLog } = await import('../../src/storage/log/local-log.js');
    const { testConfig, CapturingLogger } = await import('../storage/helpers.js');
    const log = await LocalLog.open({
      dir: path.join(dir, '__consumer_offsets-0'),
      topic: '__consumer_offsets',
      partition: 0,
      config: testConfig(),
      logger: new CapturingLogger(),
    });
    const { encodeBatch } = await import('../../src/protocol/records/batch.js');
    await log.append(
      encodeBatch({ baseTimestamp: 1n, records: [{ attributes: 0, timestampDelta: 0, offsetDelta: 0, key: kw.result(), value: vw.result(), headers: [] }] }),
      { leaderEpoch: 0 },
    );
    await log.close();
    const res = run('--files', path.join(dir, '__consumer_offsets-0', '00000000000000000000.log'), '--offsets-decoder');
    assert.equal(res.status, 0, res.stderr);
    assert.match(res.stdout, /key: \{"type":"1","data":\{"group":"g1","topic":"t","partition":2\}\} payload: \{"version":"3","data":\{"offset":42,/);
  });
});

test('bin/kafka-dump-log.sh runs the compiled tool', async () => {
  const root = REPO_ROOT;
  const compiled = path.join(root, 'dist', 'cli', 'kafka-dump-log.js');
  const { existsSync } = await import('node:fs');
  // scripts/test.sh builds dist/ first; when run alone, build it here.
  if (!existsSync(compiled)) spawnSync('npx', ['tsc', '-p', 'tsconfig.json'], { cwd: root, stdio: 'ignore' });
  await withTempDir(async (dir) => {
    await mkdir(path.join(dir, 'topic-0'));
    const log = await openLog(dir);
    await log.append(makeBatch(['via-wrapper']), { leaderEpoch: 0 });
    await log.close();
    const res = spawnSync(path.join(root, 'bin', 'kafka-dump-log.sh'), ['--files', path.join(dir, 'topic-0', '00000000000000000000.log'), '--print-data-log'], {
      encoding: 'utf8',
    });
    assert.equal(res.status, 0, res.stderr);
    assert.match(res.stdout, /payload: via-wrapper/);
  });
});

test('batches that cannot be decoded (a gzip bomb past the cap, corrupt gzip) get one line each; the dump goes on and exits non-zero', async () => {
  await withTempDir(async (dir) => {
    await mkdir(path.join(dir, 'topic-0'));
    const log = await openLog(dir);
    await log.append(makeBatch(['first']), { leaderEpoch: 0 });
    await log.append(await gzipValueBomb(200_000_000), { leaderEpoch: 0 });
    const corrupt = Buffer.from(makeBatch(['y'.repeat(300)], { compression: CompressionType.Gzip }));
    corrupt.fill(0x5a, RECORD_BATCH_OVERHEAD + 12);
    corrupt.writeUInt32BE(computeCrc(corrupt, 0), CRC);
    await log.append(corrupt, { leaderEpoch: 0 });
    await log.append(makeBatch(['last']), { leaderEpoch: 0 });
    await log.close();
    const seg = path.join(dir, 'topic-0', '00000000000000000000.log');
    const t0 = Date.now();
    const res = run('--files', seg, '--print-data-log');
    assert.ok(Date.now() - t0 < 30_000);
    assert.equal(res.status, 2, res.stderr);
    assert.equal(res.stderr.trim(), "kafka-dump-log: 2 batches could not be decoded (see 'records not decoded' lines)");
    const lines = res.stdout.trim().split('\n');
    assert.match(lines[2]!, /^baseOffset: 0 .* isvalid: true$/);
    assert.match(lines[3]!, /payload: first$/);
    assert.match(
      lines[4]!,
      /^baseOffset: 1 lastOffset: 1 count: 1 .* compresscodec: gzip crc: \d+ isvalid: true \| records not decoded: .*exceeds the limit of 33554816 bytes/,
    );
    assert.match(lines[5]!, /^baseOffset: 2 .* compresscodec: gzip .* \| records not decoded: cannot decompress batch/);
    assert.match(lines[6]!, /^baseOffset: 3 .* isvalid: true$/);
    assert.match(lines[7]!, /payload: last$/);
    const bad = run('--files', seg, '--max-decompressed-bytes', 'lots');
    assert.equal(bad.status, 1);
    assert.equal(bad.stderr.trim(), 'kafka-dump-log: --max-decompressed-bytes must be a positive integer, not lots');
  });
});

test('a .txnindex: one line per aborted transaction as DumpLogSegments prints it; a torn one is one error line', async () => {
  await withTempDir(async (dir) => {
    await mkdir(path.join(dir, 'topic-0'));
    const log = await openLog(dir);
    await log.append(makeBatch(['a', 'b']), { leaderEpoch: 0 });
    await recordAbortedTxn(log.segments, { producerId: 42n, firstOffset: 0, lastOffset: 1, lastStableOffset: 0 }, false);
    await log.close();
    const file = path.join(dir, 'topic-0', '00000000000000000000.txnindex');
    const res = run('--files', file);
    assert.equal(res.status, 0, res.stderr);
    assert.deepEqual(res.stdout.trim().split('\n'), [`Dumping ${file}`, 'version: 0 producerId: 42 firstOffset: 0 lastOffset: 1 lastStableOffset: 0']);
    await appendFile(file, Buffer.from([1, 2, 3]));
    const torn = run('--files', file);
    assert.equal(torn.status, 1);
    assert.equal(torn.stderr.trim().split('\n').length, 1);
    assert.match(torn.stderr, /not a whole number/);
  });
});

test('--transaction-log-decoder prints a __transaction_state segment the coordinator wrote as JSON, as DumpLogSegments does', async () => {
  const { startTestBroker } = await import('../helpers/broker.js');
  const { RawClient } = await import('../helpers/raw-client.js');
  const { FindCoordinatorRequestCodec, FindCoordinatorResponseCodec, InitProducerIdRequestCodec, InitProducerIdResponseCodec } = await import(
    '../../src/protocol/messages/index.js'
  );
  const b = await startTestBroker({ 'transaction.state.log.num.partitions': '1' });
  const c = await RawClient.connect(b.port);
  try {
    const deadline = Date.now() + 20_000;
    let found = -1;
    while (found !== 0 && Date.now() < deadline) {
      found = (await c.request(10, FindCoordinatorRequestCodec, FindCoordinatorResponseCodec, 3, { key: 'dump-tx', keyType: 1 })).errorCode;
    }
    assert.equal(found, 0, 'a transaction coordinator');
    let init = -1;
    while (init !== 0 && Date.now() < deadline) {
      init = (
        await c.request(22, InitProducerIdRequestCodec, InitProducerIdResponseCodec, 4, {
          transactionalId: 'dump-tx',
          transactionTimeoutMs: 30000,
          producerId: -1n,
          producerEpoch: -1,
        })
      ).errorCode;
    }
    assert.equal(init, 0);
    const seg = path.join(b.dir, '__transaction_state-0', '00000000000000000000.log');
    const res = run('--files', seg, '--transaction-log-decoder');
    assert.equal(res.status, 0, res.stderr);
    const record = res.stdout.split('\n').find((l) => l.startsWith('| offset: 0 '));
    assert.ok(record, res.stdout);
    assert.match(record, / key: \{"type":"0","data":\{"transactionalId":"dump-tx"\}\} payload: \{"version":"0","data":\{"producerId":\d+,/);
    const payload = JSON.parse(record.slice(record.indexOf(' payload: ') + 10)) as { data: Record<string, unknown> };
    assert.deepEqual(
      [payload.data.producerEpoch, payload.data.transactionTimeoutMs, payload.data.transactionStatus],
      [0, 30000, 0],
      'epoch 0, the timeout asked for, Empty',
    );
  } finally {
    c.close();
    await b.stop();
  }
});
