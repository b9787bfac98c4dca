/**
 * What the cluster tests ask of real clients and of ZooKeeper, reduced to one shape so tests can
 * compare them: per partition, its leader, replicas and ISR. Each client bootstraps from the
 * one broker it is given (the point of the tests: every broker describes the whole cluster).
 */
import assert from 'node:assert/strict';
import kafkajs from 'kafkajs';
import type { Cluster } from '../helpers/cluster.js';
import { PYTHON } from '../helpers/peers.js';
import { run } from '../helpers/run.js';
import { runCli, type CliResult } from '../cli/helpers.js';

export interface PartitionView {
  partition: number;
  leader: number;
  replicas: number[];
  isr: number[];
}

export interface MetadataView {
  brokers: number[];
  partitions: PartitionView[];
}

const byPartition = (a: PartitionView, b: PartitionView): number => a.partition - b.partition;

/** kafka-topics.sh (the project's, through tsx), with a deadline fit for a loaded machine. */
export function kafkaTopics(...args: string[]): Promise<CliResult> {
  return runCli('kafka-topics', args, { timeoutMs: 60_000 });
}

/** The assignment in /brokers/topics/<t> and every partition's /state, as Kafka's ZkData writes them. */
export async function zkTopic(
  c: Cluster,
  topic: string,
): Promise<{ topicId: string; partitions: PartitionView[]; epochs: Map<number, { leaderEpoch: number; controllerEpoch: number }> } | undefined> {
  const zk = await c.zk();
  const node = await zk.getIfExists(`/brokers/topics/${topic}`);
  if (!node) return undefined;
  const assignment = JSON.parse(node.data.toString()) as { partitions: Record<string, number[]>; topic_id?: string };
  const partitions: PartitionView[] = [];
  const epochs = new Map<number, { leaderEpoch: number; controllerEpoch: number }>();
  for (const [p, replicas] of Object.entries(assignment.partitions)) {
    const state = await zk.getIfExists(`/brokers/topics/${topic}/partitions/${p}/state`);
    if (!state) return undefined; // the controller has not elected this partition's leader yet
    const s = JSON.parse(state.data.toString()) as { leader: number; isr: number[]; leader_epoch: number; controller_epoch: number; version: number };
    assert.equal(s.version, 1, `state of ${topic}-${p}`);
    partitions.push({ partition: Number(p), leader: s.leader, replicas, isr: s.isr });
    epochs.set(Number(p), { leaderEpoch: s.leader_epoch, controllerEpoch: s.controller_epoch });
  }
  return { topicId: assignment.topic_id ?? '', partitions: partitions.sort(byPartition), epochs };
}

/** Waits until ZooKeeper has the topic with a leader for every partition (leader != -1). */
export async function waitForTopic(c: Cluster, topic: string, timeoutMs = 30_000): Promise<NonNullable<Awaited<ReturnType<typeof zkTopic>>>> {
  return c.waitFor(`${topic}'s partition states with leaders`, timeoutMs, async () => {
    const t = await zkTopic(c, topic);
    return t && t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0) ? t : undefined;
  });
}

export async function kcatMetadata(bootstrap: string, topic: string): Promise<MetadataView> {
  const r = await run('kcat', ['-b', bootstrap, '-L', '-J', '-t', topic, '-m', '15'], { timeoutMs: 30_000 });
  assert.equal(r.code, 0, r.stderr);
  const md = JSON.parse(r.stdout) as {
    brokers: { id: number }[];
    topics: { topic: string; partitions: { partition: number; leader: number; replicas: { id: number }[]; isrs: { id: number }[] }[] }[];
  };
  const t = md.topics.find((x) => x.topic === topic);
  return {
    brokers: md.brokers.map((b) => b.id).sort(),
    partitions: (t?.partitions ?? [])
      .map((p) => ({ partition: p.partition, leader: p.leader, replicas: p.replicas.map((r) => r.id), isr: p.isrs.map((r) => r.id) }))
      .sort(byPartition),
  };
}

export async function confluentMetadata(bootstrap: string, topic: string): Promise<MetadataView> {
  const script = `
import sys, json
from confluent_kafka.admin import AdminClient
md = AdminClient({'bootstrap.servers': sys.argv[1]}).list_topics(topic=sys.argv[2], timeout=15)
t = md.topics[sys.argv[2]]
print(json.dumps({'brokers': sorted(md.brokers.keys()),
  'partitions': [{'partition': p.id, 'leader': p.leader, 'replicas': list(p.replicas), 'isr': list(p.isrs)} for p in t.partitions.values()]}))
`;
  const r = await run(PYTHON, ['-c', script, bootstrap, topic], { timeoutMs: 30_000 });
  assert.equal(r.code, 0, r.stderr);
  const md = JSON.parse(r.stdout) as MetadataView;
  return { brokers: md.brokers, partitions: md.partitions.sort(byPartition) };
}

export async function kafkaPythonMetadata(bootstrap: string, topic: string): Promise<MetadataView> {
  const script = `
import sys, json
from kafka.admin import KafkaAdminClient
a = KafkaAdminClient(bootstrap_servers=sys.argv[1], request_timeout_ms=15000)
d = a.describe_cluster()
t = [x for x in a.describe_topics([sys.argv[2]]) if x['topic'] == sys.argv[2]][0]
print(json.dumps({'brokers': sorted(b['node_id'] for b in d['brokers']),
  'partitions': [{'partition': p['partition'], 'leader': p['leader'], 'replicas': p['replicas'], 'isr': p['isr']} for p in t['partitions']]}))
a.close()
`;
  const r = await run(PYTHON, ['-c', script, bootstrap, topic], { timeoutMs: 30_000 });
  assert.equal(r.code, 0, r.stderr);
  const md = JSON.parse(r.stdout) as MetadataView;
  return { brokers: md.brokers, partitions: md.partitions.sort(byPartition) };
}

export async function kafkajsMetadata(bootstrap: string, topic: string): Promise<MetadataView> {
  const kafka = new kafkajs.Kafka({ brokers: [bootstrap], clientId: 'fjord-cluster-test', logLevel: kafkajs.logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  try {
    const cluster = await admin.describeCluster();
    const md = await admin.fetchTopicMetadata({ topics: [topic] });
    return {
      brokers: cluster.brokers.map((b) => b.nodeId).sort(),
      partitions: md.topics[0]!.partitions.map((p) => ({ partition: p.partitionId, leader: p.leader, replicas: p.replicas, isr: p.isr })).sort(byPartition),
    };
  } finally {
    await admin.disconnect();
  }
}

/** Kafka's String.hashCode, for the group -> __consumer_offsets partition mapping. */
export function javaStringHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(h, 31) + s.charCodeAt(i)) | 0;
  return h;
}

/** Kafka's GroupMetadataManager.partitionFor: Utils.abs(groupId.hashCode) % offsets.topic.num.partitions. */
export function offsetsPartitionFor(group: string, numPartitions: number): number {
  return (javaStringHash(group) & 0x7fffffff) % numPartitions;
}
