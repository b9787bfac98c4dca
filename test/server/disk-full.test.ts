/**
 * A broker whose disk is full: coordinators answer retriable errors instead of
 * UNKNOWN_SERVER_ERROR, and (on a real, full tmpfs when the test may mount one) it starts and
 * serves what it has.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker } from '../helpers/broker.js';
import { RawClient } from '../helpers/raw-client.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { FindCoordinatorRequestCodec, FindCoordinatorResponseCodec } from '../../src/protocol/messages/index.js';
import type { LogManager } from '../../src/storage/log-manager.js';
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
  } finally {
    c.close();
    await b.stop();
  }
});
