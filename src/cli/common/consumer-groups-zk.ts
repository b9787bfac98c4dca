/**
 * kafka-consumer-groups.sh --zookeeper: the groups of pre-0.9 (ZooKeeper) consumers, kept under
 * `/consumers/<group>` (Kafka 0.10/0.11's ZkConsumerGroupService). --list prints the groups;
 * --describe the offsets stored in ZooKeeper with the log end offsets of the partition leaders,
 * the lag and the owning consumer, in Kafka 0.11's columns; --delete removes an inactive group
 * (or its data for one --topic); --reset-offsets (not in Kafka's ZooKeeper mode) plans as the
 * --bootstrap-server mode does and writes the znodes, refused while consumers are registered.
 */
import { Admin } from '../../client/index.js';
import { ZkConsumerOffsets, legacyGroupIdError } from '../../metadata/zk/zk-consumer-offsets.js';
import { topicNameError } from '../../metadata/topic-names.js';
import { clientOptionsFrom, loadPropertiesFile } from './config.js';
import { planReset, scopePartitions, type ResetSource, type ResetSpec, printResetPlan } from './reset-offsets.js';
import { CliError, closeAtExit } from './tool.js';
import { openZk } from './zk-admin.js';
import type { KafkaZkClient } from '../../metadata/zk/kafka-zk-client.js';

export interface ZkGroupsOpts extends ResetSpec {
  zookeeper: string;
  commandConfig?: string;
  list?: boolean;
  describe?: boolean;
  delete?: boolean;
  resetOffsets?: boolean;
  group?: string[];
  allGroups?: boolean;
  topic?: string[];
  allTopics?: boolean;
  dryRun?: boolean;
  execute?: boolean;
  export?: boolean;
}

/** Kafka's tools gave ZooKeeper 30 s (ZkUtils(zkUrl, 30000, 30000)). */
const ZK_TIMEOUT_MS = 30_000;
const MISSING = '-';

/** Java's `%-Ns`. */
const pad = (text: string, n: number): string => text.padEnd(n);

export async function runZkGroups(o: ZkGroupsOpts): Promise<number> {
  const props = loadPropertiesFile(o.commandConfig);
  // Kafka 0.11 printed this on stderr before any ZooKeeper-mode action.
  process.stderr.write('Note: This will only show information about consumers that use ZooKeeper (not those using the Java consumer API).\n\n');
  const zk = await openZk(o.zookeeper, props);
  const store = new ZkConsumerOffsets(zk.session, ZK_TIMEOUT_MS);
  if (o.list) {
    for (const g of await store.groups()) console.log(g);
    return 0;
  }
  const groups = o.allGroups ? await store.groups() : (o.group ?? []);
  if (o.delete) return deleteGroups(store, groups, o.topic);
  if (groups.length === 0) throw new CliError('missing required argument --group (or --all-groups)');
  for (const g of groups) {
    const bad = legacyGroupIdError(g);
    if (bad) throw new CliError(bad);
  }
  const admin = await brokersAdmin(zk, props);
  if (o.describe) {
    let failed = false;
    for (const g of groups) failed = !(await describe(zk, store, admin, g)) || failed;
    return failed ? 1 : 0;
  }
  return reset(store, admin, groups, o);
}

/** An admin client bootstrapped from the brokers registered in ZooKeeper (the tool is given no broker). */
async function brokersAdmin(zk: KafkaZkClient, props: Map<string, string>): Promise<Admin> {
  const endpoints = (await zk.getAllBrokers())
    .map((b) => b.endpoints.find((e) => e.securityProtocol === 'PLAINTEXT') ?? b.endpoints[0])
    .filter((e) => e !== undefined);
  if (endpoints.length === 0) throw new CliError('no broker is registered in ZooKeeper (/brokers/ids is empty): log end offsets cannot be read');
  return closeAtExit(new Admin(clientOptionsFrom(props, endpoints.map((e) => `${e.host}:${e.port}`).join(','))));
}

/** The latest offset of each partition, from its leader; undefined where it cannot be had (no leader). */
async function logEndOffsets(admin: Admin, tps: readonly { topic: string; partition: number }[]): Promise<(bigint | undefined)[]> {
  if (tps.length === 0) return [];
  try {
    return (await admin.listOffsets(tps.map((tp) => ({ ...tp, timestamp: -1n })))).map((a) => a.offset);
  } catch {
    return Promise.all(
      tps.map((tp) =>
        admin.listOffsets([{ ...tp, timestamp: -1n }]).then(
          (a) => a[0]?.offset,
          () => undefined,
        ),
      ),
    );
  }
}

/**
 * Kafka 0.11's ZooKeeper describe: every partition of every topic the group has offsets for,
 * with its offset, log end offset, lag and owner (the owner znode's thread id without its
 * `-<n>` suffix); then a row per registered consumer that owns nothing.
 */
async function describe(zk: KafkaZkClient, store: ZkConsumerOffsets, admin: Admin, group: string): Promise<boolean> {
  if (!(await store.groupExists(group))) {
    console.log(`Error: The consumer group '${group}' does not exist.`);
    return false;
  }
  const offsets = await store.groupOffsets(group);
  const rows: { topic: string; partition: number; offset: bigint | undefined; owner: string }[] = [];
  const owning = new Set<string>();
  for (const topic of [...offsets.keys()].sort()) {
    const assignment = await zk.getTopicAssignment(topic);
    const parts = assignment ? [...assignment.partitions.keys()].sort((a, b) => a - b) : [...offsets.get(topic)!.keys()];
    const owners = await store.owners(group, topic);
    for (const p of parts) {
      const threadId = owners.get(p);
      const owner = threadId !== undefined && threadId.lastIndexOf('-') > 0 ? threadId.slice(0, threadId.lastIndexOf('-')) : (threadId ?? MISSING);
      if (owner !== MISSING) owning.add(owner);
      rows.push({ topic, partition: p, offset: offsets.get(topic)!.get(p), owner });
    }
  }
  const ends = await logEndOffsets(admin, rows);
  const line = (c: readonly string[]): string => `${pad(c[0]!, 30)} ${pad(c[1]!, 10)} ${pad(c[2]!, 15)} ${pad(c[3]!, 15)} ${pad(c[4]!, 10)} ${pad(c[5]!, 50)}`;
  let out = `\n${line(['TOPIC', 'PARTITION', 'CURRENT-OFFSET', 'LOG-END-OFFSET', 'LAG', 'CONSUMER-ID'])}\n`;
  rows.forEach((r, i) => {
    const end = ends[i];
    const lag = r.offset !== undefined && r.offset !== -1n && end !== undefined ? String(end - r.offset) : MISSING;
    out += `${line([r.topic, String(r.partition), r.offset !== undefined ? String(r.offset) : MISSING, end !== undefined ? String(end) : MISSING, lag, r.owner])}\n`;
  });
  for (const [id, reg] of await store.members(group)) {
    if (owning.has(id)) continue;
    // One row per subscribed topic, as Kafka.
    for (let n = Math.max(1, Object.keys(reg?.subscription ?? {}).length); n > 0; n--) out += `${line([MISSING, MISSING, MISSING, MISSING, MISSING, id])}\n`;
  }
  process.stdout.write(out);
  return true;
}

/** Kafka's AdminUtils.deleteConsumerGroupInZK / deleteConsumerGroupInfoForTopicInZK, with its messages. */
async function deleteGroups(store: ZkConsumerOffsets, groups: string[], topics: string[] | undefined): Promise<number> {
  const topic = topics?.[0];
  if ((topics?.length ?? 0) > 1) throw new CliError('--delete takes one --topic');
  if (topic !== undefined) {
    const bad = topicNameError(topic);
    if (bad) throw new CliError(bad);
  }
  if (groups.length === 0) {
    if (topic === undefined) throw new CliError('--delete needs --group (or --topic, for every inactive group)');
    // --topic alone: that topic's data of every inactive group.
    for (const g of await store.groups()) if ((await store.members(g)).size === 0) await store.deleteGroupTopic(g, topic);
    console.log(`Deleted consumer group information for all inactive consumer groups for topic '${topic}' in zookeeper.`);
    return 0;
  }
  let failed = false;
  for (const g of groups) {
    const bad = legacyGroupIdError(g);
    const what = topic === undefined ? `group '${g}'` : `group '${g}' topic '${topic}'`;
    if (bad || !(await store.groupExists(g))) {
      console.log(`Error: Delete for ${what} failed because group does not exist.`);
      failed = true;
    } else if ((await store.members(g)).size > 0) {
      console.log(`Error: Delete for ${what} failed because its consumers are still active.`);
      failed = true;
    } else if (topic === undefined) {
      await store.deleteGroup(g);
      console.log(`Deleted all consumer group information for group '${g}' in zookeeper.`);
    } else {
      await store.deleteGroupTopic(g, topic);
      console.log(`Deleted consumer group information for group '${g}' topic '${topic}' in zookeeper.`);
    }
  }
  return failed ? 1 : 0;
}

async function reset(store: ZkConsumerOffsets, admin: Admin, groups: string[], o: ZkGroupsOpts): Promise<number> {
  if (!o.allTopics && !o.topic?.length && !o.fromFile) throw new CliError('--reset-offsets needs --topic, --all-topics or --from-file');
  if (o.dryRun && o.execute) throw new CliError('--dry-run and --execute cannot be used together');
  if (!o.dryRun && !o.execute && !o.export) {
    console.log(
      'WARN: No action will be performed as the --execute option is missing. You should add the --dry-run option explicitly if you are scripting this command and want to keep the current default behavior without prompting.',
    );
  }
  for (const group of groups) {
    // A group not in ZooKeeper yet can only be given offsets from a file (moving a group in).
    if (!o.fromFile && !(await store.groupExists(group))) throw new CliError(`The consumer group '${group}' does not exist.`);
    const members = await store.members(group);
    if (members.size > 0 && o.execute) {
      throw new CliError(
        `Offsets can only be reset if the group '${group}' is inactive, but ${members.size} consumer(s) are registered under /consumers/${group}/ids.`,
      );
    }
    const source: ResetSource = {
      listOffsets: (q, iso) => admin.listOffsets(q, iso),
      describeTopics: (names) => admin.describeTopics(names),
      listGroupOffsets: async (g, scope) => {
        const all = await store.groupOffsets(g);
        const out = new Map<string, Map<number, { offset: bigint }>>();
        for (const [t, ps] of all) {
          for (const [p, offset] of ps) {
            if (scope && !scope.some((tp) => tp.topic === t && tp.partition === p)) continue;
            out.set(t, (out.get(t) ?? new Map<number, { offset: bigint }>()).set(p, { offset }));
          }
        }
        return out;
      },
    };
    const scope = o.fromFile ? [] : await scopePartitions(source, group, o.topic, o.allTopics ?? false);
    const plan = await planReset(source, group, scope, o);
    if (o.execute) for (const p of plan) await store.commit(group, p.topic, p.partition, p.offset);
    printResetPlan(group, plan, o.export === true);
  }
  return 0;
}
