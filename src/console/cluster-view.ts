/**
 * The cluster page: brokers (with the API versions each serves), the controller, partitions
 * that are under-replicated or offline, and disk use per log dir (DescribeLogDirs). One
 * Metadata request for all topics and one DescribeLogDirs per broker, summed here. A broker that
 * holds replicas but is not registered (stopped, crashed) is listed apart: Metadata names only
 * live brokers, so otherwise it would simply vanish from the page.
 */
import type { Admin } from '../client/index.js';
import { API_SPECS } from '../client/index.js';

export interface ClusterView {
  clusterId: string | null;
  controllerId: number;
  brokers: {
    nodeId: number;
    host: string;
    port: number;
    rack: string | null;
    /** API name -> "min-max" as the broker's ApiVersions answered. */
    apis: Record<string, string>;
  }[];
  /** Broker ids named as replicas that no live broker has: down. */
  missingBrokers: number[];
  topics: number;
  partitions: number;
  /** How many there are; the lists hold the first MAX_LISTED. */
  underReplicatedCount: number;
  offlineCount: number;
  underReplicated: { topic: string; partition: number; replicas: number[]; isr: number[] }[];
  offline: { topic: string; partition: number; replicas: number[] }[];
  logDirs: { broker: number; logDir: string; error: number; totalBytes: string; usableBytes: string; partitionBytes: string; partitions: number }[];
}

/** Lists of problem partitions stop here: the page shows the count and the first ones. */
const MAX_LISTED = 200;

export async function clusterView(admin: Admin): Promise<ClusterView> {
  const md = await admin.cluster.refreshMetadata(null);
  const underReplicated: ClusterView['underReplicated'] = [];
  const offline: ClusterView['offline'] = [];
  let partitions = 0;
  let underCount = 0;
  let offlineCount = 0;
  const missing = new Set<number>();
  for (const t of md.topics.values()) {
    for (const p of t.partitions) {
      partitions++;
      for (const r of p.replicas) if (!md.brokers.has(r)) missing.add(r);
      if (p.leader < 0) {
        if (offlineCount++ < MAX_LISTED) offline.push({ topic: t.name, partition: p.partition, replicas: p.replicas });
      } else if (p.isr.length < p.replicas.length) {
        if (underCount++ < MAX_LISTED) underReplicated.push({ topic: t.name, partition: p.partition, replicas: p.replicas, isr: p.isr });
      }
    }
  }
  const names = new Map(Object.values(API_SPECS).map((s) => [s.apiKey, s.name]));
  const versions = await admin.brokerApiVersions();
  const logDirs = await admin.describeLogDirs().catch(() => []);
  return {
    clusterId: md.clusterId,
    controllerId: md.controllerId,
    brokers: versions.map(({ node, versions: v }) => ({
      nodeId: node.nodeId,
      host: node.host,
      port: node.port,
      rack: node.rack,
      apis: Object.fromEntries([...v].sort(([a], [b]) => a - b).map(([key, r]) => [names.get(key) ?? `api-${key}`, `${r.min}-${r.max}`])),
    })),
    missingBrokers: [...missing].sort((a, b) => a - b),
    topics: md.topics.size,
    partitions,
    underReplicatedCount: underCount,
    offlineCount,
    underReplicated,
    offline,
    logDirs: logDirs.map((d) => ({
      broker: d.broker,
      logDir: d.logDir,
      error: d.errorCode,
      totalBytes: String(d.totalBytes),
      usableBytes: String(d.usableBytes),
      partitionBytes: String(d.partitions.reduce((sum, p) => sum + p.size, 0n)),
      partitions: d.partitions.length,
    })),
  };
}
