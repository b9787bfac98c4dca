/**
 * Cluster mode's batch of topic creations (a Metadata request's auto-creation, issue 21):
 * ZooKeeper writes with bounded concurrency (not hundreds queued on the session at once), one
 * wait for the controller, and each topic answered on its own.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ErrorCode, KafkaError } from '../../../src/protocol/errors.js';
import type { KafkaZkApi } from '../../../src/metadata/zk/zk-client-types.js';
import { broker, header, pstate, startNode } from './zk-broker-helpers.js';
import { waitFor } from '../../helpers/wait-for.js';

const until = (check: () => boolean, timeoutMs = 5000) => waitFor('the condition', timeoutMs, check, { pollMs: 5 });

test('createTopics writes at most 16 topics to ZooKeeper at once, waits once, and answers each topic', async () => {
  const n = await startNode(1, { writeTimeoutMs: 1000 });
  try {
    await n.control.updateMetadata(header(1), [broker(1)], [pstate('x.y', 0, 1, 0, [1])], new Map());
    const api = n.zk.api as { createTopic: KafkaZkApi['createTopic'] };
    const create = api.createTopic;
    let inFlight = 0;
    let most = 0;
    api.createTopic = async (...args) => {
      inFlight++;
      most = Math.max(most, inFlight);
      try {
        await new Promise((r) => setTimeout(r, 1)); // a ZooKeeper round trip
        return await create(...args);
      } finally {
        inFlight--;
      }
    };
    const names = Array.from({ length: 100 }, (_, i) => `t${i}`);
    const pending = n.image.createTopics([
      ...names.map((name) => ({ name, numPartitions: 1, replicationFactor: 1 })),
      { name: 'x_y', numPartitions: 1, replicationFactor: 1 }, // collides with x.y
      { name: 't0', numPartitions: 1, replicationFactor: 1 }, // named twice in the batch
    ]);
    await until(() => n.zk.topics.size === 100);
    assert.ok(most <= 16 && most > 1, `${most} writes in flight at once`);
    // The controller confirms all but t99.
    const confirmed = names.slice(0, 99);
    await n.control.updateMetadata(
      header(1),
      [broker(1)],
      confirmed.map((t) => pstate(t, 0, 1, 0, [1])),
      new Map(confirmed.map((t) => [t, n.zk.topics.get(t)!.topicId])),
    );
    const out = await pending;
    assert.equal(out.length, 102);
    out.slice(0, 99).forEach((o, i) => assert.ok(!(o instanceof Error) && o.name === names[i], `t${i}: ${String(o)}`));
    const codeOf = (o: unknown): number => (o instanceof KafkaError ? o.code : -1);
    assert.equal(codeOf(out[99]), ErrorCode.REQUEST_TIMED_OUT, 't99: never confirmed');
    assert.equal(codeOf(out[100]), ErrorCode.INVALID_TOPIC_EXCEPTION);
    assert.equal(codeOf(out[101]), ErrorCode.TOPIC_ALREADY_EXISTS);
  } finally {
    await n.close();
  }
});
