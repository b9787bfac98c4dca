import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { EmbeddedMetadataStore, METADATA_FILE } from '../../src/metadata/embedded/embedded-store.js';

const self = { id: 0, host: '127.0.0.1', port: 9092, rack: null };

test('a metadata write that fails (full disk) leaves no half-created topic, and later writes work again', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'fjord-meta-'));
  try {
    const store = await EmbeddedMetadataStore.open(dir, self);
    // The temp file of the atomic write cannot be created, as on a full disk.
    const blocker = path.join(dir, `${METADATA_FILE}.tmp`);
    await mkdir(blocker);
    await assert.rejects(store.createTopic({ name: 't1', numPartitions: 1, replicationFactor: 1 }));
    assert.equal(store.topic('t1'), undefined, 'not created in memory when it could not be stored');
    await rm(blocker, { recursive: true });
    await store.createTopic({ name: 't1', numPartitions: 1, replicationFactor: 1 });
    await store.close();
    const stored = JSON.parse(await readFile(path.join(dir, METADATA_FILE), 'utf8')) as { topics: { name: string }[] };
    assert.deepEqual(
      stored.topics.map((t) => t.name),
      ['t1'],
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
