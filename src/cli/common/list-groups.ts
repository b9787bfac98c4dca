/**
 * kafka-consumer-groups.sh's view of the whole cluster's groups: ListGroups on every broker the
 * metadata names, each bounded by the tool's --timeout, plus the __consumer_offsets partitions
 * that have no leader. Kafka 3.9's tool fails the whole --list on the first broker that does not
 * answer (ListConsumerGroupsResult.all()) and says nothing of leaderless offsets partitions;
 * here the groups that could be listed are still listed, and every broker or partition whose
 * groups are missing is named, so no group goes missing silently.
 */
import type { Admin, BrokerNode, Cluster, GroupListing } from '../../client/index.js';
import { KafkaError, ErrorCode } from '../../client/index.js';
import { Api } from '../../client/apis.js';
import { sleep } from '../../client/cluster.js';
import { CliError, describeError } from './tool.js';

const OFFSETS_TOPIC = '__consumer_offsets';

export interface UnreachableBroker {
  node: BrokerNode;
  reason: string;
}

export interface ClusterGroups {
  /** Every group some broker listed, sorted by id. */
  groups: GroupListing[];
  /** Brokers whose groups are missing from `groups`, and why. */
  unreachable: UnreachableBroker[];
  /** __consumer_offsets partitions without a leader: their groups are missing too. */
  leaderlessOffsetsPartitions: number[];
}

/**
 * Settles `work` within `ms`, or rejects with a CliError built by `timedOut`. The work itself is
 * not cancelled: the tool ends, and runTool closes its clients.
 */
export async function withTimeout<T>(work: Promise<T>, ms: number, timedOut: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CliError(timedOut())), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/** ListGroups on one broker, retried while it is still loading groups, until `deadline`. */
async function listOn(cluster: Cluster, node: BrokerNode, deadline: number): Promise<GroupListing[]> {
  for (;;) {
    const conn = await cluster.brokerConnection(node.nodeId);
    const resp = await conn.send(Api.ListGroups, { statesFilter: [], typesFilter: [] });
    if (resp.errorCode === 0) return resp.groups.map((g) => ({ groupId: g.groupId, protocolType: g.protocolType, state: g.groupState }));
    if (resp.errorCode !== ErrorCode.COORDINATOR_LOAD_IN_PROGRESS || Date.now() + cluster.retryBackoffMs >= deadline) {
      throw new KafkaError(resp.errorCode, `listing groups on broker ${node.nodeId} failed`);
    }
    await sleep(cluster.retryBackoffMs);
  }
}

/** Every broker's groups within `timeoutMs`; what could not be listed is reported, not thrown. */
export async function listClusterGroups(admin: Admin, timeoutMs: number): Promise<ClusterGroups> {
  const cluster = admin.cluster;
  // Reaching the bootstrap servers at all is the client's to bound and word (as every tool's).
  const md = await cluster.refreshMetadata([OFFSETS_TOPIC]);
  const deadline = Date.now() + timeoutMs;
  const nodes = [...md.brokers.values()].sort((a, b) => a.nodeId - b.nodeId);
  const answers = await Promise.allSettled(
    nodes.map((node) => withTimeout(listOn(cluster, node, deadline), timeoutMs, () => `no answer within ${timeoutMs} ms (--timeout)`)),
  );
  const seen = new Map<string, GroupListing>();
  const unreachable: UnreachableBroker[] = [];
  answers.forEach((a, i) => {
    if (a.status === 'rejected') unreachable.push({ node: nodes[i]!, reason: describeError(a.reason) });
    else for (const g of a.value) seen.set(g.groupId, g);
  });
  const offsets = md.topics.get(OFFSETS_TOPIC);
  const leaderlessOffsetsPartitions =
    offsets && offsets.errorCode === 0
      ? offsets.partitions
          .filter((p) => p.leader < 0 || !md.brokers.has(p.leader))
          .map((p) => p.partition)
          .sort((a, b) => a - b)
      : [];
  const groups = [...seen.values()].sort((a, b) => (a.groupId < b.groupId ? -1 : a.groupId > b.groupId ? 1 : 0));
  return { groups, unreachable, leaderlessOffsetsPartitions };
}

/** One line per gap in a listing (stderr), empty when every group could be listed. */
export function listingGaps(r: ClusterGroups): string[] {
  const lines = r.unreachable.map(
    (u) => `could not list the groups of broker ${u.node.nodeId} (${u.node.host}:${u.node.port}): ${u.reason}; the groups it coordinates are missing above`,
  );
  const n = r.leaderlessOffsetsPartitions.length;
  if (n > 0) {
    lines.push(`${n} partition(s) of ${OFFSETS_TOPIC} have no leader (${r.leaderlessOffsetsPartitions.join(', ')}): the groups stored there are missing above`);
  }
  return lines;
}
