/**
 * A produce to a topic whose logs are not open yet (just auto-created) must not wait behind
 * another client's creation of thousands of partitions: the broker opens logs one topic at a
 * time, and the produce used to wait for every sync queued before its own. Found by the fuzz
 * soak (seed 42): same-connection probes unanswered for 10 s behind such a produce while mutated
 * CreateTopics requests created thousands of partitions.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestBroker } from '../helpers/broker.js';
import { RawClient } from '../helpers/raw-client.js';
import {
  CreateTopicsRequestCodec,
  CreateTopicsResponseCodec,
  MetadataRequestCodec,
  MetadataResponseCodec,
  ProduceRequestCodec,
  ProduceResponseCodec,
} from '../../src/protocol/messages/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { batchOf } from './handlers/data-plane-helpers.js';

/** Enough that opening them takes seconds even on an idle machine (measured 6,000 in 7 s at load 12). */
const BIG = 5000;

function produce(c: RawClient, topic: string) {
  return c.request(0, ProduceRequestCodec, ProduceResponseCodec, 7, {
    transactionalId: null,
    acks: 1,
    timeoutMs: 30_000,
    topicData: [{ name: topic, partitionData: [{ index: 0, records: batchOf(['v']) }] }],
  });
}

function metadata(c: RawClient, topic: string, autoCreate: boolean) {
  return c.request(3, MetadataRequestCodec, MetadataResponseCodec, 4, { topics: [{ name: topic }], allowAutoTopicCreation: autoCreate });
}

test('a produce to a just-created topic is answered while another client creates thousands of partitions', async () => {
  const b = await startTestBroker({ 'max.broker.partitions': '20000', 'max.partitions.per.request': '20000' });
  const admin = await RawClient.connect(b.port);
  const client = await RawClient.connect(b.port);
  try {
    const t0 = Date.now();
    let bigMs = -1;
    const big = admin
      .request(19, CreateTopicsRequestCodec, CreateTopicsResponseCodec, 5, {
        topics: [{ name: 'big', numPartitions: BIG, replicationFactor: 1 }],
        timeoutMs: 600_000,
        validateOnly: false,
      })
      .then((r) => {
        bigMs = Date.now() - t0;
        return r;
      });
    // the big topic is in metadata (its logs are being opened) before the small one is created
    const deadline = Date.now() + 60_000;
    while ((await metadata(client, 'big', false)).topics[0]!.errorCode !== ErrorCode.NONE) {
      assert.ok(Date.now() < deadline, 'big topic never appeared in metadata');
    }
    const md = await metadata(client, 'fresh', true); // auto-created: its logs queue behind big's
    assert.equal(md.topics[0]!.errorCode, ErrorCode.NONE);

    const p0 = Date.now();
    const res = await produce(client, 'fresh');
    const produceAt = Date.now() - t0;
    const produceMs = Date.now() - p0;
    const code = res.responses[0]!.partitionResponses[0]!.errorCode;
    // answered at once, retriable (as Kafka answers for a partition whose log is not there yet), or written
    assert.ok(code === ErrorCode.NOT_LEADER_OR_FOLLOWER || code === ErrorCode.NONE, `error ${code}`);

    const created = await big;
    assert.equal(created.topics[0]!.errorCode, ErrorCode.NONE);
    // Before: the produce waited until every log of `big` was open, and was answered with it.
    assert.ok(
      bigMs - produceAt > 500,
      `produce answered after ${produceMs} ms, ${bigMs - produceAt} ms before the ${BIG}-partition creation (${bigMs} ms) finished`,
    );

    // once the logs are open, the client's retry is written
    const again = await produce(client, 'fresh');
    assert.equal(again.responses[0]!.partitionResponses[0]!.errorCode, ErrorCode.NONE);
  } finally {
    admin.close();
    client.close();
    await b.stop();
  }
});
