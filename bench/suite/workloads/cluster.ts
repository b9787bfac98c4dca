/**
 * The `cluster` workload of `npm run bench`: produce to three Fjord brokers with replication
 * factor 3 (ZooKeeper mode, test/helpers/cluster.ts: Debian's ZooKeeper, every broker a child
 * process) beside one broker with replication factor 1, in the same run, acks=1 and acks=all.
 */
import { Admin } from '../../../src/client/index.js';
import { Cluster } from '../../../test/helpers/cluster.js';
import { fjordProduce, type Measured, throughputSamples } from '../measure.js';
import { processCpuSeconds } from '../peers.js';
import type { Sample, SuiteContext, Workload } from '../workload.js';

const PARTITIONS = 3;

/** Creates `name` and waits until every partition has a leader and a full ISR. */
async function createReplicated(bootstrap: string, name: string, replicationFactor: number): Promise<void> {
  const admin = new Admin({ bootstrapServers: bootstrap });
  try {
    const configs: Record<string, string> = replicationFactor > 1 ? { 'min.insync.replicas': '2' } : {};
    const err = (await admin.createTopics([{ name, numPartitions: PARTITIONS, replicationFactor, configs }], { timeoutMs: 60_000 })).get(name);
    if (err) throw new Error(`creating ${name}: ${err.message}`);
    const deadline = performance.now() + 60_000;
    for (;;) {
      const parts = (await admin.describeTopics([name]).catch(() => undefined))?.[0]?.partitions ?? [];
      if (parts.length === PARTITIONS && parts.every((p) => p.leader >= 0 && p.isr.length === replicationFactor)) return;
      if (performance.now() > deadline) throw new Error(`${name} has no full ISR after 60 s`);
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    await admin.close();
  }
}

async function deleteTopic(bootstrap: string, name: string): Promise<void> {
  const admin = new Admin({ bootstrapServers: bootstrap });
  try {
    const err = (await admin.deleteTopics([name], { timeoutMs: 60_000 })).get(name);
    if (err) throw new Error(`deleting ${name}: ${err.message}`);
  } finally {
    await admin.close();
  }
}

/** rdkafka-perf against the cluster; the CPU is the sum over the three brokers' processes. */
async function clusterProduce(ctx: SuiteContext, cluster: Cluster, topic: string, records: number, acks: '1' | 'all'): Promise<Measured> {
  const pids = [0, 1, 2].map((id) => cluster.broker(id).pid!);
  const cpu = async () => (await Promise.all(pids.map(processCpuSeconds))).reduce((a, b) => a + b, 0);
  return fjordProduce(ctx, { bootstrap: cluster.bootstrap(), cpuSeconds: cpu }, topic, { records, size: 1024, acks });
}

const clusterWorkload: Workload = {
  name: 'cluster',
  order: 60,
  title: 'Three brokers, replication factor 3',
  description:
    `Produce of 1 KiB records (bench/rdkafka-perf.c, linger.ms=5, batch.size=1 MB) to a ${PARTITIONS}-partition topic: one Fjord broker with ` +
    'replication factor 1, beside three Fjord brokers on Debian’s ZooKeeper (test/helpers/cluster.ts, one process each, on this same machine) ' +
    'with replication factor 3 and min.insync.replicas=2, leaders spread over the brokers. acks=1 is acknowledged before the followers copy; ' +
    'acks=all after the ISR has. Server CPU is the sum over the three brokers, so CPU s/GB shows replication’s cost. Every broker shares ' +
    'the same cores: a lower bound for three machines.',
  systems: ['fjord', 'fjord-rf3'],
  limit: 'fjord-rf3',
  async run(ctx) {
    if (!ctx.wants('fjord')) return { figures: [] };
    if (!Cluster.available()) throw new Error("Debian's zookeeper package is not installed (scripts/install-test-deps.sh)");
    const records = ctx.quick ? 10_000 : 200_000;
    const samples: Sample[] = [];
    const single = await ctx.startFjord();
    ctx.command('test/helpers/cluster.ts: Cluster.start() (ZooKeeper + bin/kafka-server-start.sh x3, offsets.topic.replication.factor=3)');
    const cluster = await Cluster.start({ props: { 'offsets.topic.replication.factor': '3' } });
    try {
      for (const repeat of ctx.repeatIndices()) {
        for (const acks of ['1', 'all'] as const) {
          const c = `1 KiB, ${PARTITIONS} partitions, acks=${acks}`;
          for (const setup of ctx.rotate(['fjord', 'fjord-rf3'] as const, repeat)) {
            ctx.log(`cluster ${c}: ${setup} (repeat ${repeat + 1})`);
            const topic = `cluster-${setup}-${acks}-${repeat}`;
            if (setup === 'fjord') {
              await createReplicated(single.bootstrap, topic, 1);
              samples.push(...throughputSamples(c, 'fjord', await fjordProduce(ctx, single, topic, { records, size: 1024, acks })));
              await single.deleteTopic(topic);
            } else {
              await createReplicated(cluster.bootstrap(), topic, 3);
              samples.push(...throughputSamples(c, 'fjord-rf3', await clusterProduce(ctx, cluster, topic, records, acks)));
              await deleteTopic(cluster.bootstrap(), topic);
            }
          }
        }
      }
    } finally {
      await Promise.all([single.stop(), cluster.stop()]);
    }
    return {
      figures: ctx.medians(samples),
      notes: ['"server CPU % of a core" of the three brokers is their sum (up to 200% on two cores).'],
    };
  },
};

export default clusterWorkload;
