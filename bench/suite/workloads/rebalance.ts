/**
 * The `rebalance` workload of `npm run bench`: a 100-member consumer group on one Fjord broker,
 * with the classic protocol (JoinGroup/SyncGroup, range, eager) and the consumer protocol
 * (KIP-848, server-side uniform assignor). Times how long 100 new members take until every
 * partition of a 100-partition topic is assigned to exactly one of them, then how long the 99
 * others take to cover all partitions again after one member leaves (close(): LeaveGroup).
 */
import { Consumer } from '../../../src/client/index.js';
import type { FjordHandle, Sample, Workload } from '../workload.js';

const PROTOCOLS = ['classic', 'consumer'] as const;
type Protocol = (typeof PROTOCOLS)[number];

interface Member {
  consumer: Consumer;
  polling: Promise<void>;
  stopped: boolean;
}

function startMember(bootstrap: string, group: string, topic: string, protocol: Protocol, index: number): Member {
  const consumer = new Consumer({
    bootstrapServers: bootstrap,
    clientId: `rebalance-${index}`,
    groupId: group,
    groupProtocol: protocol,
    enableAutoCommit: false,
    autoOffsetReset: 'latest',
  });
  const member: Member = { consumer, stopped: false, polling: Promise.resolve() };
  consumer.subscribe([topic]);
  // poll() drives the group protocol (joins, heartbeats, reconciliation); the topic stays empty.
  member.polling = (async () => {
    while (!member.stopped) await consumer.poll(100);
  })();
  return member;
}

/**
 * Resolves when every member owns at least one partition and together they own all `partitions`,
 * each exactly once (the first member to join alone owns them all: that is not yet the group).
 */
async function untilCovered(members: readonly Member[], partitions: number, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const assignments = members.map((m) => m.consumer.assignment().map((tp) => tp.partition));
    const owned = assignments.flat();
    if (assignments.every((a) => a.length > 0) && owned.length === partitions && new Set(owned).size === partitions) return;
    if (performance.now() > deadline)
      throw new Error(`the group did not settle within ${timeoutMs} ms: ${new Set(owned).size} of ${partitions} partitions assigned`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

async function stopMember(m: Member): Promise<void> {
  m.stopped = true;
  await m.polling.catch(() => {});
  await m.consumer.close().catch(() => {});
}

async function once(fjord: FjordHandle, protocol: Protocol, size: number, repeat: number): Promise<Sample[]> {
  const topic = `rebalance-${protocol}-${repeat}`;
  await fjord.createTopic(topic, size);
  const members: Member[] = [];
  try {
    const cpuBefore = await fjord.cpuSeconds();
    const started = performance.now();
    for (let i = 0; i < size; i++) members.push(startMember(fjord.bootstrap, `group-${topic}`, topic, protocol, i));
    await untilCovered(members, size, 180_000);
    const joinSeconds = (performance.now() - started) / 1000;
    const joinCpu = (await fjord.cpuSeconds()) - cpuBefore;
    const leaving = members.pop()!;
    const leftAt = performance.now();
    await stopMember(leaving);
    await untilCovered(members, size, 180_000);
    const leaveSeconds = (performance.now() - leftAt) / 1000;
    const c = `${size} members, ${protocol === 'classic' ? 'classic (range, eager)' : 'consumer protocol (KIP-848)'}`;
    return [
      { case: c, system: 'fjord', metric: 'join: all assigned, s', value: joinSeconds, higherIsBetter: false },
      { case: c, system: 'fjord', metric: 'one leaves: all reassigned, s', value: leaveSeconds, higherIsBetter: false },
      { case: c, system: 'fjord', metric: 'broker CPU s during the join', value: joinCpu, higherIsBetter: false },
    ];
  } finally {
    await Promise.all(members.map(stopMember));
    await fjord.deleteTopic(topic).catch(() => {});
  }
}

const rebalance: Workload = {
  name: 'rebalance',
  order: 50,
  title: 'Consumer group of 100 members',
  description:
    'Fjord only (NATS JetStream and Redis Streams have no rebalancing group to compare with). 100 Fjord-client consumers (bench/suite/workloads/rebalance.ts, ' +
    'one process, one connection each) subscribe to a 100-partition topic in one group: the time until every partition is assigned to exactly one ' +
    'member, then, after one member leaves (LeaveGroup), until the 99 others cover every partition again. Default session and heartbeat ' +
    'settings (a classic member learns of a rebalance on its next heartbeat, 3 s; a KIP-848 member on its next heartbeat, ' +
    'group.consumer.heartbeat.interval.ms 5 s), group.initial.rebalance.delay.ms=0. The broker CPU time is read from /proc/PID/stat.',
  systems: ['fjord'],
  primary: 'join: all assigned, s',
  async run(ctx) {
    if (!ctx.wants('fjord')) return { figures: [] };
    const size = ctx.quick ? 10 : 100;
    const samples: Sample[] = [];
    const fjord = await ctx.startFjord();
    try {
      for (const repeat of ctx.repeatIndices()) {
        for (const protocol of ctx.rotate(PROTOCOLS, repeat)) {
          ctx.log(`rebalance ${size} members, ${protocol} (repeat ${repeat + 1})`);
          samples.push(...(await once(fjord, protocol, size, repeat)));
        }
      }
    } finally {
      await fjord.stop();
    }
    const rank = (c: string) => (c.includes('classic') ? 0 : 1);
    return { figures: ctx.medians(samples).sort((a, b) => rank(a.case) - rank(b.case)) };
  },
};

export default rebalance;
