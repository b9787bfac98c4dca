/**
 * The replica fetcher when a partition cannot go on (issue 21): a log that refuses writes
 * (ENOSPC, injected through the segment's write seam, as storage's own tests do) is fetched
 * again with back-off until appends succeed, counted meanwhile; a log in an offline directory is
 * given up; partitions fenced by a leader epoch change (a planned leader move) are said once per
 * round at info level, not once per partition at warn.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pino } from 'pino';
import { ErrorCode } from '../../src/protocol/errors.js';
import { ReplicaFetcher } from '../../src/replication/fetcher/replica-fetcher.js';
import { followerReplicaOf } from '../../src/replication/fetcher/manager.js';
import type { Partition } from '../../src/replication/partition/partition.js';
import { FakeLeader, TEST_FETCHER_CONFIG, epochBatch, openPartition, tempDir, waitFor } from './fetcher-helpers.js';

const enospc = (): Error => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', errno: -28 });
const eio = (): Error => Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO', errno: -5 });

interface LogLine {
  level: number;
  msg: string;
  [k: string]: unknown;
}

interface Setup {
  leaders: Map<string, Partition>;
  followers: Partition[];
  fake: FakeLeader;
  fetcher: ReplicaFetcher;
  lines: LogLine[];
  close(): Promise<void>;
}

async function setup(partitions = 1): Promise<Setup> {
  const l = await tempDir('fjord-leader-');
  const f = await tempDir('fjord-follower-');
  const leaders = new Map<string, Partition>();
  const followers: Partition[] = [];
  for (let i = 0; i < partitions; i++) {
    leaders.set(`t-${i}`, await openPartition(l.dir, 't', i));
    followers.push(await openPartition(f.dir, 't', i));
  }
  const fake = new FakeLeader(leaders);
  const lines: LogLine[] = [];
  const logger = pino({ level: 'debug' }, { write: (s: string) => void lines.push(JSON.parse(s) as LogLine) });
  const fetcher = new ReplicaFetcher(fake, 0, TEST_FETCHER_CONFIG, logger);
  fetcher.start();
  return {
    leaders,
    followers,
    fake,
    fetcher,
    lines,
    async close() {
      await fetcher.shutdown();
      for (const p of [...leaders.values(), ...followers]) await p.log.close();
      await l.remove();
      await f.remove();
    },
  };
}

function add(s: Setup, leaderEpoch = s.fake.leaderEpoch): void {
  s.fetcher.addPartitions(s.followers.map((p) => ({ replica: followerReplicaOf(p), topicId: 'id', leaderId: 1, leaderEpoch, fetchOffset: 0 })));
}

const INFO = 30;
const WARN = 40;

test('a follower whose log refuses appends (disk full) fetches again with back-off and catches up once appends succeed', async () => {
  const s = await setup();
  try {
    const leader = s.leaders.get('t-0')!;
    const follower = s.followers[0]!;
    await leader.appendAsFollower(epochBatch(0, 3, 0));
    const seg = follower.log.activeSegment;
    const realWrite = seg.writeAt;
    let refused = 0;
    seg.writeAt = () => {
      refused++;
      throw enospc();
    };
    add(s);
    // It keeps trying (backing off), rather than giving the partition up.
    await waitFor('a third refused append', () => refused >= 3, 10_000);
    assert.equal(s.fetcher.has('t-0'), true, 'still fetched');
    assert.equal(s.fetcher.failed.size, 0, 'not failed');
    assert.equal(s.fetcher.blockedPartitionsCount, 1, 'counted as blocked');
    const blockedLines = s.lines.filter((l) => /cannot be written/.test(l.msg));
    assert.equal(blockedLines.length, 1, `one line for the episode: ${JSON.stringify(blockedLines)}`);
    assert.equal(blockedLines[0]!.level, WARN);
    // Backed off: the retries are spaced by at least the growing backoff (20, 40 ms...).
    const fetchesWhileFull = s.fake.fetches.length;
    assert.ok(fetchesWhileFull <= refused + 2, `${fetchesWhileFull} fetches for ${refused} refused appends`);

    seg.writeAt = realWrite;
    await waitFor('the follower caught up', () => follower.logEndOffset === 3 && follower.highWatermark === 3, 10_000);
    assert.equal(s.fetcher.blockedPartitionsCount, 0);
    assert.equal(s.lines.filter((l) => /can be written again/.test(l.msg)).length, 1, 'one line when it heals');
  } finally {
    await s.close();
  }
});

test('a follower whose log dir went offline (EIO) is given up, not retried without end', async () => {
  const s = await setup();
  try {
    await s.leaders.get('t-0')!.appendAsFollower(epochBatch(0, 3, 0));
    const follower = s.followers[0]!;
    let attempts = 0;
    follower.log.activeSegment.writeAt = () => {
      attempts++;
      // What the LogManager does on a fault that may mean a failing disk.
      follower.log.local.offline = true;
      throw eio();
    };
    add(s);
    await waitFor('partition failed', () => s.fetcher.failed.has('t-0'), 10_000);
    assert.equal(s.fetcher.has('t-0'), false);
    assert.equal(attempts, 1);
    assert.equal(s.fetcher.blockedPartitionsCount, 0);
  } finally {
    await s.close();
  }
});

test('partitions fenced by a leader epoch change are said once per round, at info, not once per partition at warn', async () => {
  const s = await setup(20);
  try {
    for (const p of s.leaders.values()) await p.appendAsFollower(epochBatch(0, 1, 0));
    // A planned leader move: the leader is at epoch 1 before this follower hears of it.
    s.fake.leaderEpoch = 1;
    add(s, 0);
    await waitFor('every partition fenced', () => s.fetcher.failed.size === 20, 10_000);
    // Per partition at debug only; at info and above, one line.
    const fenced = s.lines.filter((l) => l.level >= INFO && (/fenced/.test(l.msg) || /fenced/.test(String(l.why ?? ''))));
    assert.equal(s.lines.filter((l) => l.level >= WARN).length, 0, `no warning: ${JSON.stringify(s.lines.filter((l) => l.level >= WARN).slice(0, 2))}`);
    assert.equal(fenced.length, 1, `one line for the round, got ${fenced.length}`);
    assert.equal(fenced[0]!.count, 20);
    assert.match(fenced[0]!.msg, /20 partitions fenced by leader epoch changes from broker 1/);
    // The next LeaderAndIsr brings epoch 1: fetching resumes.
    add(s, 1);
    assert.equal(s.fetcher.failed.size, 0);
    await waitFor('all caught up', () => s.followers.every((p) => p.logEndOffset === 1), 10_000);
  } finally {
    await s.close();
  }
});

test('a fenced answer to OffsetForLeaderEpoch is said the same way', async () => {
  const s = await setup(3);
  try {
    for (const p of s.followers) await p.appendAsFollower(epochBatch(0, 1, 0));
    s.fake.truncationOnFetch = false;
    const real = s.fake.fetchEpochEndOffsets.bind(s.fake);
    s.fake.fetchEpochEndOffsets = async (parts) => {
      const out = await real(parts);
      for (const k of out.keys()) out.set(k, { errorCode: ErrorCode.FENCED_LEADER_EPOCH, leaderEpoch: -1, endOffset: -1 });
      return out;
    };
    add(s, 0);
    await waitFor('every partition fenced', () => s.fetcher.failed.size === 3, 10_000);
    assert.equal(s.lines.filter((l) => l.level >= WARN).length, 0);
    assert.equal(s.lines.filter((l) => l.level >= INFO && /fenced/.test(l.msg)).length, 1);
  } finally {
    await s.close();
  }
});
