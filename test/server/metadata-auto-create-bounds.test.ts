/**
 * Issue 21, F1: one Metadata v4+ request naming many new topics with allow_auto_topic_creation
 * crashed an embedded broker (100,000 names: heap out of memory; 1,000: 36 s and 400 MB): every
 * lookup started at once, each created its topic alone, and each creation serialised the whole
 * metadata file and queued a write of it. Now the names are answered once each, at most
 * auto.create.topics.max.per.request are created per request, as one batch held to
 * CreateTopics' caps, with one write of the metadata file.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BrokerChild } from '../helpers/broker-child.js';
import { startTestBroker } from '../helpers/broker.js';
import { RawClient } from '../helpers/raw-client.js';
import {
  MetadataRequestCodec,
  MetadataResponseCodec,
  ProduceRequestCodec,
  ProduceResponseCodec,
  type MetadataResponse,
} from '../../src/protocol/messages/index.js';
import { ErrorCode } from '../../src/protocol/errors.js';
import { EmbeddedMetadataStore } from '../../src/metadata/embedded/embedded-store.js';

const NAMES = 3000;

function metadata(c: RawClient, names: string[], autoCreate: boolean): Promise<MetadataResponse> {
  return c.request(3, MetadataRequestCodec, MetadataResponseCodec, 12, { topics: names.map((name) => ({ name })), allowAutoTopicCreation: autoCreate });
}

function codes(res: MetadataResponse): Record<string, number> {
  const out: Record<string, number> = {};
  for (const t of res.topics) out[t.errorCode] = (out[t.errorCode] ?? 0) + 1;
  return out;
}

test(`a Metadata request naming ${NAMES} new topics twice each is answered promptly, once per name, while another client is served`, {
  timeout: 120_000,
}, async (t) => {
  const b = await BrokerChild.start({ topics: [{ name: 'steady' }] });
  const attacker = await RawClient.connect(b.port);
  const prober = await RawClient.connect(b.port);
  try {
    await b.settle();
    b.resetPeaks();
    const startRss = b.rss;
    const names = Array.from({ length: NAMES }, (_, i) => `auto-${i}`);
    const t0 = Date.now();
    let answered = false;
    let failure = '';
    const attack = metadata(attacker, [...names, ...names], true)
      .catch((e: unknown) => {
        failure = `${String(e)}; broker ${b.exited ? `exited (${b.exitCode}): ${b.stderr.slice(-300)}` : 'up'}`;
        return null;
      })
      .finally(() => (answered = true));
    // A well-behaved client asks about its topic back to back meanwhile.
    let worstProbeMs = 0;
    let probes = 0;
    while (!answered && Date.now() - t0 < 15_000) {
      const p0 = Date.now();
      const res = await metadata(prober, ['steady'], false).catch(() => null);
      if (res === null) break; // the broker went down: reported below
      worstProbeMs = Math.max(worstProbeMs, Date.now() - p0);
      probes++;
      assert.equal(res.topics[0]!.errorCode, ErrorCode.NONE);
      await new Promise((r) => setTimeout(r, 10)); // paces the probes; the loop ends on the answer or the deadline
    }
    assert.ok(answered, `no answer after ${Date.now() - t0} ms (worst probe ${worstProbeMs} ms, RSS ${Math.round((b.peakRss - startRss) / 2 ** 20)} MB up)`);
    const res = await attack;
    assert.ok(res !== null, `after ${Date.now() - t0} ms: ${failure} (worst probe ${worstProbeMs} ms, RSS peak ${Math.round(b.peakRss / 2 ** 20)} MB)`);
    const answerMs = Date.now() - t0;
    await b.settle();
    const grewMb = Math.round((b.peakRss - startRss) / 2 ** 20);
    const figures = `answer ${answerMs} ms, ${probes} probes, worst probe ${worstProbeMs} ms, broker loop worst ${b.worstLoopDelayMs} ms, RSS +${grewMb} MB, codes ${JSON.stringify(codes(res))}`;
    t.diagnostic(figures);
    // Kafka reads the names into a set: each is answered once.
    assert.equal(res.topics.length, NAMES, figures);
    assert.equal(new Set(res.topics.map((t) => t.name)).size, NAMES, figures);
    // auto.create.topics.max.per.request (1000): the rest is left for the client's retry.
    assert.deepEqual(codes(res), { [ErrorCode.NONE]: 1000, [ErrorCode.UNKNOWN_TOPIC_OR_PARTITION]: NAMES - 1000 }, figures);
    assert.ok(answerMs < 10_000, figures);
    assert.ok(worstProbeMs < 1000, figures);
    assert.ok(grewMb < 200, figures);
  } finally {
    attacker.close();
    prober.close();
    await b.stop();
  }
});

test('one Metadata request writes the metadata file once, however many topics it creates', async () => {
  const proto = EmbeddedMetadataStore.prototype as unknown as { persist(): Promise<void> };
  const persist = proto.persist;
  let persists = 0;
  proto.persist = function (this: EmbeddedMetadataStore) {
    persists++;
    return persist.call(this);
  };
  const b = await startTestBroker();
  const c = await RawClient.connect(b.port);
  try {
    persists = 0; // the store wrote its first file when it opened
    const res = await metadata(
      c,
      Array.from({ length: 500 }, (_, i) => `t${i}`),
      true,
    );
    assert.deepEqual(codes(res), { [ErrorCode.NONE]: 500 });
    assert.equal(persists, 1, `${persists} persists for 500 topics`);
    assert.equal(b.broker.services.metadata.topics().length, 500);
  } finally {
    proto.persist = persist;
    c.close();
    await b.stop();
  }
});

test('auto-creation is held to max.partitions.per.request, max.broker.partitions and auto.create.topics.max.per.request', async () => {
  let b = await startTestBroker({ 'num.partitions': '4', 'max.partitions.per.request': '10' });
  let c = await RawClient.connect(b.port);
  try {
    // 3 topics of 4 partitions: 12 > max.partitions.per.request, the whole batch is refused, as CreateTopics does.
    let res = await metadata(c, ['a', 'b', 'c'], true);
    assert.deepEqual(
      res.topics.map((t) => [t.name, t.errorCode]),
      [
        ['a', ErrorCode.POLICY_VIOLATION],
        ['b', ErrorCode.POLICY_VIOLATION],
        ['c', ErrorCode.POLICY_VIOLATION],
      ],
    );
    assert.equal(b.broker.services.metadata.topic('a'), undefined);
    res = await metadata(c, ['a', 'b'], true);
    assert.deepEqual(
      res.topics.map((t) => [t.name, t.errorCode, t.partitions.length]),
      [
        ['a', ErrorCode.NONE, 4],
        ['b', ErrorCode.NONE, 4],
      ],
    );
  } finally {
    c.close();
    await b.stop();
  }
  b = await startTestBroker({ 'num.partitions': '4', 'max.broker.partitions': '10', 'auto.create.topics.max.per.request': '3' });
  c = await RawClient.connect(b.port);
  try {
    // Beyond 3 new names: UNKNOWN_TOPIC_OR_PARTITION (retriable). Of those 3, max.broker.partitions
    // (10) lets two of 4 partitions in, in request order.
    const res = await metadata(c, ['x', 'y', 'z', 'w'], true);
    assert.deepEqual(
      res.topics.map((t) => [t.name, t.errorCode]),
      [
        ['x', ErrorCode.NONE],
        ['y', ErrorCode.NONE],
        ['z', ErrorCode.POLICY_VIOLATION],
        ['w', ErrorCode.UNKNOWN_TOPIC_OR_PARTITION],
      ],
    );
    assert.deepEqual(
      b.broker.services.metadata
        .topics()
        .map((t) => t.name)
        .sort(),
      ['x', 'y'],
    );
  } finally {
    c.close();
    await b.stop();
  }
});

test('a Produce naming many unknown topics auto-creates at most auto.create.topics.max.per.request of them', async () => {
  const b = await startTestBroker({ 'auto.create.topics.max.per.request': '5' });
  const c = await RawClient.connect(b.port);
  try {
    const res = await c.request(0, ProduceRequestCodec, ProduceResponseCodec, 9, {
      acks: 1,
      timeoutMs: 5000,
      topicData: Array.from({ length: 50 }, (_, i) => ({ name: `p${i}`, partitionData: [{ index: 0, records: null }] })),
    });
    assert.ok(res.responses.every((t) => t.partitionResponses[0]!.errorCode === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
    // The creation starts after the answer, as one batch: once topics show, all of them do.
    const deadline = Date.now() + 10_000;
    while (b.broker.services.metadata.topics().length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    assert.deepEqual(
      b.broker.services.metadata
        .topics()
        .map((t) => t.name)
        .sort(),
      ['p0', 'p1', 'p2', 'p3', 'p4'],
    );
  } finally {
    c.close();
    await b.stop();
  }
});
