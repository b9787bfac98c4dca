import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  MalformedCheckpointError,
  readLeaderEpochCheckpoint,
  readMetaProperties,
  readOffsetCheckpoint,
  writeLeaderEpochCheckpoint,
  writeMetaProperties,
  writeOffsetCheckpoint,
} from '../../src/storage/checkpoint/checkpoint-files.js';
import { withTempDir } from './helpers.js';

test('offset checkpoints use Kafka text format and round-trip', async () => {
  await withTempDir(async (dir) => {
    const file = path.join(dir, 'recovery-point-offset-checkpoint');
    assert.equal((await readOffsetCheckpoint(file)).size, 0, 'missing file is empty');
    await writeOffsetCheckpoint(file, [
      { topic: 'a', partition: 0, offset: 10 },
      { topic: 'my-topic', partition: 12, offset: 9007199254740000 },
    ]);
    assert.equal(await readFile(file, 'utf8'), '0\n2\na 0 10\nmy-topic 12 9007199254740000\n');
    const read = await readOffsetCheckpoint(file);
    assert.equal(read.get('my-topic-12'), 9007199254740000);
    assert.ok(!(await readdir(dir)).some((f) => f.endsWith('.tmp')));
    await writeFile(file, '0\n3\na 0 1\n');
    await assert.rejects(readOffsetCheckpoint(file), MalformedCheckpointError);
    await writeFile(file, '1\n0\n');
    await assert.rejects(readOffsetCheckpoint(file), /unsupported version/);
  });
});

test('leader epoch checkpoint and meta.properties', async () => {
  await withTempDir(async (dir) => {
    const file = path.join(dir, 'leader-epoch-checkpoint');
    await writeLeaderEpochCheckpoint(file, [
      { epoch: 0, startOffset: 0 },
      { epoch: 3, startOffset: 42 },
    ]);
    assert.equal(await readFile(file, 'utf8'), '0\n2\n0 0\n3 42\n');
    assert.deepEqual(await readLeaderEpochCheckpoint(file), [
      { epoch: 0, startOffset: 0 },
      { epoch: 3, startOffset: 42 },
    ]);
    await writeMetaProperties(dir, { version: '0', 'broker.id': '1', 'cluster.id': 'abc' });
    assert.match(await readFile(path.join(dir, 'meta.properties'), 'utf8'), /^#\n#.*\nversion=0\nbroker.id=1\ncluster.id=abc\n$/);
    assert.deepEqual(await readMetaProperties(dir), { version: '0', 'broker.id': '1', 'cluster.id': 'abc' });
  });
});

test('concurrent writers of one checkpoint file are serialised: all succeed, the last write wins', async () => {
  await withTempDir(async (dir) => {
    const file = path.join(dir, 'recovery-point-offset-checkpoint');
    // Two writers sharing one temporary file raced: one renamed it away under the other
    // (ENOENT rename ...tmp), or the file held a mix of both.
    const writers = Array.from({ length: 40 }, (_, i) => writeOffsetCheckpoint(file, [{ topic: 't', partition: 0, offset: i }]));
    const results = await Promise.allSettled(writers);
    const failed = results.filter((r) => r.status === 'rejected');
    assert.deepEqual(failed, [], 'no writer fails');
    assert.equal(await readFile(file, 'utf8'), '0\n1\nt 0 39\n', 'the last write wins');
    assert.ok(!(await readdir(dir)).some((f) => f.endsWith('.tmp')), 'no temporary file left');
  });
});
