/**
 * A broker restarted into a cluster knows topics only once the controller's UpdateMetadata has
 * reached it. Metadata requests it answers before that (clients reconnect at once) must get a
 * retriable error for an existing topic, never one a client takes as permanent: it once
 * auto-created the topic with replication factor 0 and answered INVALID_REPLICATION_FACTOR,
 * which made a transactional confluent-kafka producer fail fatally. Metadata requests go to the
 * broker's port from before it listens until it describes the topic.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { Cluster } from '../helpers/cluster.js';
import { RawClient } from '../helpers/raw-client.js';
import { requirePeer } from '../helpers/peers.js';
import { zkTopic } from './cluster-clients.js';
import { createTopic } from '../interop/txn-helpers.js';
import { ErrorCode, errorName } from '../../src/protocol/errors.js';
import { MetadataRequestCodec, MetadataResponseCodec } from '../../src/protocol/messages/index.js';

const TOPIC = 'restart-md';

let c: Cluster | undefined;
before(async () => {
  if (Cluster.available()) c = await Cluster.start();
});
after(() => c?.stop());

/** Asks `port` for TOPIC's metadata (auto-creation allowed) until it answers it whole; the error codes seen on the way. */
async function metadataUntilKnown(port: number, stopAfter: Promise<unknown>): Promise<Map<number, number>> {
  const codes = new Map<number, number>();
  let started = false;
  void stopAfter.then(() => (started = true));
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (Date.now() > deadline)
      throw new Error(`the restarted broker never described ${TOPIC}: ${[...codes].map(([k, n]) => `${errorName(k)} x${n}`).join(', ')}`);
    let client: RawClient;
    try {
      client = await RawClient.connect(port);
    } catch {
      await new Promise((r) => setTimeout(r, 5)); // not listening yet: try again at once
      continue;
    }
    try {
      for (let i = 0; i < 500; i++) {
        const r = await client.request(3, MetadataRequestCodec, MetadataResponseCodec, 9, { topics: [{ name: TOPIC }], allowAutoTopicCreation: true });
        const code = r.topics[0]!.errorCode;
        codes.set(code, (codes.get(code) ?? 0) + 1);
        if (code === ErrorCode.NONE && started) return codes;
      }
    } catch {
      // the connection dropped (the broker was still starting): reconnect
    } finally {
      client.close();
    }
  }
}

test('a restarted broker answers Metadata for an existing topic with retriable errors until the controller has told it the cluster', {
  timeout: 240_000,
}, async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const cluster = c!;
  await createTopic(cluster.bootstrap(), TOPIC, 3, { replicationFactor: 3 });
  const before = await zkTopic(cluster, TOPIC);
  const b = cluster.broker(1);
  const seen: string[] = [];
  for (let round = 0; round < 2; round++) {
    await cluster.killAndExpire(b.id); // its session closed at once: the registration goes without waiting out the timeout
    await cluster.waitForRegistered([0, 2]);
    const starting = b.start();
    const codes = await metadataUntilKnown(b.port, starting);
    await starting;
    seen.push([...codes].map(([k, n]) => `${errorName(k)} x${n}`).join(', '));
    const bad = [...codes.keys()].filter((k) => k !== ErrorCode.NONE && k !== ErrorCode.LEADER_NOT_AVAILABLE && k !== ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
    assert.deepEqual(bad.map(errorName), [], `round ${round}: only retriable answers before the topic is known (${seen.at(-1)})`);
  }
  const afterRestarts = await zkTopic(cluster, TOPIC);
  assert.equal(afterRestarts?.topicId, before?.topicId, 'the topic was not created again');
  t.diagnostic(`answers per round: ${seen.join(' | ')}`);
});
