/**
 * A follower whose disk fills (a real full tmpfs as its log dir) drops out of the ISR, and rejoins
 * it by itself once space is freed, without a LeaderAndIsr (issue 21, F3: it used to give the
 * partition up "until the next LeaderAndIsr", which never came, and stayed out of the ISR).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InprocCluster } from '../helpers/inproc-cluster.js';
import { requirePeer } from '../helpers/peers.js';
import { ZOOKEEPER_JAR } from '../helpers/zookeeper.js';
import { fillDisk, mountTmpfs, unmount } from '../helpers/tmpfs.js';
import { Connection } from '../../src/client/connection.js';
import { Api } from '../../src/client/apis.js';
import { encodeBatch } from '../../src/protocol/records/index.js';

/** Once appends succeed again the follower is back in the ISR within this (its retries back off at most 10 s). */
const REJOIN_BOUND_MS = 15_000;

async function produce(port: number, topic: string, values: string[]): Promise<number> {
  const conn = await Connection.connect('127.0.0.1', port, { clientId: 'disk-full', connectTimeoutMs: 5000, requestTimeoutMs: 15_000 });
  try {
    const records = encodeBatch({
      records: values.map((v, i) => ({ attributes: 0, timestampDelta: 0, offsetDelta: i, key: null, value: Buffer.from(v), headers: [] })),
      baseTimestamp: BigInt(Date.now()),
    });
    const res = await conn.send(Api.Produce, { acks: 1, timeoutMs: 10_000, topicData: [{ name: topic, partitionData: [{ index: 0, records }] }] });
    return res.responses[0]!.partitionResponses[0]!.errorCode;
  } finally {
    conn.close();
  }
}

test('a follower whose disk filled rejoins the ISR by itself once space is freed', async (t) => {
  if (!requirePeer(t, 'zookeeper') || !existsSync(ZOOKEEPER_JAR)) return;
  const mnt = await mkdtemp(join(tmpdir(), 'fjord-follower-full-'));
  if (!mountTmpfs(t, mnt, 8 * 1024 * 1024)) return void (await rm(mnt, { recursive: true, force: true }));
  let c: InprocCluster | undefined;
  try {
    c = await InprocCluster.start({ brokers: 2, logDirs: { 1: join(mnt, 'logs') } });
    const cl = c;
    await cl.createTopic('full', [0, 1]);
    // Retried as a client would: the produce path also wants the UpdateMetadata that follows LeaderAndIsr.
    await cl.waitFor('a first produce', 10_000, async () => (await produce(cl.broker(0).port, 'full', ['a', 'b', 'c'])) === 0);
    await cl.waitFor('the follower has the first records', 10_000, () => cl.partition(1, 'full')?.logEndOffset === 3);

    // The follower's disk fills; the leader takes more than a page's worth (tmpfs allocates by page).
    await fillDisk(join(mnt, 'filler'));
    const big = 'x'.repeat(16 * 1024);
    for (let i = 0; i < 3; i++) assert.equal(await produce(cl.broker(0).port, 'full', [big]), 0);
    await cl.waitFor('the follower out of the ISR', 15_000, async () => (await cl.zkState('full'))?.isr.join(',') === '0');
    const follower = cl.partition(1, 'full')!;
    assert.ok(follower.logEndOffset < cl.partition(0, 'full')!.logEndOffset, `the follower could not append (its end ${follower.logEndOffset})`);
    const fetchers = cl.broker(1).broker!.services.replicaManager.replicaFetchers!;
    assert.equal(fetchers.blockedPartitionsCount, 1, 'the under-replicated partition is counted while its log refuses writes');

    // Space is freed: no LeaderAndIsr comes, the follower must catch up and rejoin by itself.
    for (const f of await readdir(mnt)) if (f.startsWith('filler')) await rm(join(mnt, f));
    const freed = Date.now();
    await cl
      .waitFor(`the follower back in the ISR within ${REJOIN_BOUND_MS} ms of space being freed`, REJOIN_BOUND_MS, async () => {
        const isr = (await cl.zkState('full'))?.isr ?? [];
        return isr.includes(1) && cl.partition(1, 'full')?.logEndOffset === cl.partition(0, 'full')?.logEndOffset;
      })
      .catch(async (err: unknown) => assert.fail(`${(err as Error).message}\n${await cl.describe('full')}`));
    t.diagnostic(`rejoined the ISR ${Date.now() - freed} ms after space was freed`);
    assert.equal(fetchers.blockedPartitionsCount, 0);
    // And it keeps following.
    assert.equal(await produce(cl.broker(0).port, 'full', ['d']), 0);
    await cl.waitFor('the follower follows on', 10_000, () => cl.partition(1, 'full')?.logEndOffset === cl.partition(0, 'full')?.logEndOffset);
  } finally {
    await c?.stop();
    unmount(mnt);
    await rm(mnt, { recursive: true, force: true });
  }
});
