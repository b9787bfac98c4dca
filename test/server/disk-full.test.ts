/**
 * A broker whose disk is full: coordinators answer retriable errors instead of
 * UNKNOWN_SERVER_ERROR, and (on a real, full tmpfs when the test may mount one) it starts and
 * serves what it has.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { fillDisk, mountTmpfs, unmount } from '../helpers/tmpfs.js';
import { RawClient } from '../helpers/raw-client.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import {
  FindCoordinatorRequestCodec,
  FindCoordinatorResponseCodec,
  InitProducerIdRequestCodec,
  InitProducerIdResponseCodec,
  ListOffsetsRequestCodec,
  ListOffsetsResponseCodec,
  MetadataRequestCodec,
  MetadataResponseCodec,
} from '../../src/protocol/messages/index.js';
import { batchOf, createTopic, fetchOne, produce, valuesOf } from './handlers/data-plane-helpers.js';
import type { LogManager } from '../../src/storage/manager/log-manager.js';
import type { MetadataStore } from '../../src/metadata/metadata-store.js';

const enospc = (): Error => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28 });

async function findCoordinator(c: RawClient, group: string, version = 3): Promise<number> {
  const res = await c.request(10, FindCoordinatorRequestCodec, FindCoordinatorResponseCodec, version, { key: group, keyType: 0, coordinatorKeys: [group] });
  return version >= 4 ? res.coordinators[0]!.errorCode : res.errorCode;
}

async function pollUntil(what: string, fn: () => Promise<boolean>, deadlineMs = 30_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!(await fn())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('FindCoordinator answers COORDINATOR_NOT_AVAILABLE while the offsets topic cannot be created or its logs opened, and recovers after', async () => {
  const b = await startTestBroker({ 'offsets.topic.num.partitions': '3' });
  const c = await RawClient.connect(b.port);
  try {
    const metadata: MetadataStore = b.broker.services.metadata;
    const lm: LogManager = b.broker.services.logManager;
    // 1. The metadata of the topic cannot be written (its file is on the full disk).
    const createTopic = metadata.createTopic.bind(metadata);
    metadata.createTopic = () => Promise.reject(enospc());
    for (const v of [0, 3, 4]) assert.equal(await findCoordinator(c, 'g1', v), ErrorCode.COORDINATOR_NOT_AVAILABLE, `v${v}`);
    metadata.createTopic = createTopic;
    // 2. The topic is created, but its partitions' logs cannot be (mkdir / segment file: ENOSPC).
    const createLog = lm.createLog.bind(lm);
    lm.createLog = () => Promise.reject(enospc());
    for (const v of [0, 3, 4]) assert.equal(await findCoordinator(c, 'g1', v), ErrorCode.COORDINATOR_NOT_AVAILABLE, `v${v}`);
    assert.ok(metadata.topic('__consumer_offsets'), 'the topic itself exists');
    // 3. Space is back: the next FindCoordinator (clients retry it) finds the coordinator loaded.
    lm.createLog = createLog;
    await pollUntil('coordinator', async () => (await findCoordinator(c, 'g1')) === ErrorCode.NONE);
    const p = b.broker.services.groupCoordinator.partitionFor('g1');
    await pollUntil('loaded partition', async () => b.broker.services.groupCoordinator.runtime.status(p) === 'active');
    // 4. The disk fills again: a coordinator write (an offset commit) gets the retriable
    // NOT_COORDINATOR, as Kafka maps KAFKA_STORAGE_ERROR, never UNKNOWN_SERVER_ERROR.
    const seg = lm.getLog('__consumer_offsets', p)!.activeSegment;
    const write = seg.writeAt;
    seg.writeAt = () => {
      throw enospc();
    };
    const commit = (): ReturnType<typeof b.broker.services.groupCoordinator.commitOffsets> =>
      b.broker.services.groupCoordinator.commitOffsets({
        groupId: 'g1',
        generationId: -1,
        memberId: '',
        groupInstanceId: null,
        retentionTimeMs: -1n,
        apiVersion: 8,
        topics: [
          { name: 't', partitions: [{ partitionIndex: 0, committedOffset: 5n, committedLeaderEpoch: -1, commitTimestamp: -1n, committedMetadata: null }] },
        ],
      });
    assert.equal((await commit())[0]!.partitions[0]!.errorCode, ErrorCode.NOT_COORDINATOR);
    seg.writeAt = write;
    assert.equal((await commit())[0]!.partitions[0]!.errorCode, ErrorCode.NONE);
  } finally {
    c.close();
    await b.stop();
  }
});

async function listLatest(c: RawClient, topic: string): Promise<{ errorCode: number; offset: bigint }> {
  const res = await c.request(2, ListOffsetsRequestCodec, ListOffsetsResponseCodec, 7, {
    replicaId: -1,
    isolationLevel: 0,
    topics: [{ name: topic, partitions: [{ partitionIndex: 0, timestamp: -1n, currentLeaderEpoch: -1 }] }],
  });
  const p = res.topics[0]!.partitions[0]!;
  return { errorCode: p.errorCode, offset: p.offset };
}

test('a broker starts on a full disk (a real full tmpfs) and serves what it has; appends are refused with KAFKA_STORAGE_ERROR until space is freed', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'fjord-full-'));
  if (!mountTmpfs(t, dir, 16 * 1024 * 1024)) return void (await rm(dir, { recursive: true, force: true }));
  const logDir = path.join(dir, 'logs');
  const filler = path.join(dir, 'filler');
  let b: TestBroker | undefined;
  let c: RawClient | undefined;
  const restart = async (): Promise<void> => {
    c?.close();
    await b?.stop();
    b = await startTestBroker({ 'auto.create.topics.enable': 'false', 'offsets.topic.num.partitions': '3' }, logDir);
    c = await RawClient.connect(b.port);
  };
  try {
    await restart();
    await createTopic(b!, 'kept', 1);
    const stored = ['a', 'b', 'c', 'd', 'e', 'f'];
    for (let i = 0; i < stored.length; i += 2) {
      assert.equal((await produce(c!, 7, 'kept', 0, batchOf(stored.slice(i, i + 2)))).responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.NONE);
    }
    await b!.stop(); // clean shutdown, then the disk fills up while the broker is down
    b = undefined;
    const filled = await fillDisk(filler);
    assert.ok(filled > 0);
    // Twice: after the clean shutdown, then after a shutdown on the full disk (not clean: its
    // final flush and checkpoints cannot be written, so the second start recovers).
    for (const round of ['after a clean shutdown', 'after a shutdown on the full disk']) {
      await restart();
      // Starting may free a page or two (leftovers removed); fill those too before asking.
      await fillDisk(`${filler}-${round.length}`);
      const dirs = b!.broker.services.logManager.logDirsState();
      assert.equal(dirs[0]!.online, true, `${round}: the log dir stays online`);
      const md = await c!.request(3, MetadataRequestCodec, MetadataResponseCodec, 9, { topics: [{ name: 'kept' }], allowAutoTopicCreation: false });
      assert.equal(md.topics[0]!.errorCode, ErrorCode.NONE, round);
      assert.equal(md.topics[0]!.partitions[0]!.leaderId, 0, round);
      const fetched = (await fetchOne(c!, 11, 'kept', 0, 0)).responses[0]!.partitions[0]!;
      assert.equal(fetched.errorCode, ErrorCode.NONE, round);
      assert.deepEqual(valuesOf(fetched.records), stored, `${round}: stored records are served`);
      assert.deepEqual(await listLatest(c!, 'kept'), { errorCode: ErrorCode.NONE, offset: 6n }, round);
      const refused = (await produce(c!, 7, 'kept', 0, batchOf(['no-room'.repeat(2000)]))).responses[0]!.partitionResponses[0]!;
      assert.equal(refused.errorCode, ErrorCode.KAFKA_STORAGE_ERROR, `${round}: appends are refused`);
      assert.equal(await findCoordinator(c!, 'g'), ErrorCode.COORDINATOR_NOT_AVAILABLE, `${round}: FindCoordinator is retriable`);
    }
    // Space is freed: appends and the coordinator work again without a restart.
    for (const f of await readdir(dir)) if (f.startsWith('filler')) await rm(path.join(dir, f));
    const resumed = (await produce(c!, 7, 'kept', 0, batchOf(['g']))).responses[0]!.partitionResponses[0]!;
    assert.equal(resumed.errorCode, ErrorCode.NONE);
    assert.equal(resumed.baseOffset, 6n);
    await pollUntil('coordinator', async () => (await findCoordinator(c!, 'g')) === ErrorCode.NONE);
    c!.close();
    await b!.stop();
    b = undefined;
    assert.ok((await readdir(logDir)).includes('.kafka_cleanshutdown'), 'a clean shutdown once there is room');
  } finally {
    c?.close();
    await b?.stop().catch(() => undefined);
    unmount(dir);
    await rm(dir, { recursive: true, force: true });
  }
});

test('InitProducerId answers the retriable COORDINATOR_LOAD_IN_PROGRESS (as Kafka does while no id block is available) when the id block cannot be written', async () => {
  const b = await startTestBroker();
  const c = await RawClient.connect(b.port);
  try {
    const ids = b.broker.services.replicaManager.producerIds;
    const generate = ids.generate.bind(ids);
    ids.generate = () => Promise.reject(enospc());
    const init = async (): Promise<number> =>
      (
        await c.request(22, InitProducerIdRequestCodec, InitProducerIdResponseCodec, 4, {
          transactionalId: null,
          transactionTimeoutMs: 60000,
          producerId: -1n,
          producerEpoch: -1,
        })
      ).errorCode;
    // KAFKA_STORAGE_ERROR here is fatal to the Java producer ("Unexpected error in InitProducerIdResponse").
    assert.equal(await init(), ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
    ids.generate = generate;
    assert.equal(await init(), ErrorCode.NONE);
  } finally {
    c.close();
    await b.stop();
  }
});
