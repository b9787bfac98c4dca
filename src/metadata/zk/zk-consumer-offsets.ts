/**
 * Pre-0.9 consumer groups as ZooKeeper keeps them (`/consumers/<group>/{ids,owners,offsets}`):
 * the broker's OffsetCommit/OffsetFetch v0 (Kafka 0.8.2's KafkaApis, kept by Kafka up to 2.x in
 * ZooKeeper mode) and the `--zookeeper` side of kafka-consumer-groups and the Export/ImportZkOffsets
 * tools read and write them here.
 *
 * Every operation is bounded by `timeoutMs`: while ZooKeeper is unreachable the client queues
 * requests until it reconnects, and a broker must answer (Kafka 2.x: ZooKeeperClientTimeoutException
 * after zookeeper.connection.timeout.ms, answered as UNKNOWN_SERVER_ERROR) rather than hold the
 * request forever. Nothing here blocks the event loop: other requests go on meanwhile.
 */
import { CONSUMERS_PATH, consumerGroupPath, consumerIdsPath, consumerOffsetPath, consumerOwnersPath, consumerTopicOffsetsPath } from './zk-paths.js';
import { ConsumerOffsetZNode, ConsumerRegistrationZNode, type ConsumerRegistration } from './zk-consumer-znodes.js';
import { ZkError, isZkError, type ZkSession } from './zk-session.js';

/** Rejects with ZkError CONNECTION_TIMEOUT when `p` has not settled within `ms`. */
export function withDeadline<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ZkError('CONNECTION_TIMEOUT', `ZooKeeper did not answer ${what} within ${ms} ms`, what)), ms);
    timer.unref();
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/**
 * A group name usable as one znode name: Kafka 0.8 put the group id in the path as is, so a
 * `/` would nest it under another group's node, and '', '.' and '..' are not znode names.
 */
export function legacyGroupIdError(group: string): string | undefined {
  if (group === '' || group === '.' || group === '..') return `group id "${group}" cannot be a ZooKeeper node name`;
  if (group.includes('/')) return `group id "${group}" contains '/', which would nest it in ZooKeeper's /consumers tree`;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it looks for
  if (/[\u0000-\u001f\u007f]/.test(group)) return `group id ${JSON.stringify(group)} contains control characters`;
  return undefined;
}

export class ZkConsumerOffsets {
  constructor(
    readonly session: ZkSession,
    private readonly timeoutMs: number,
  ) {}

  /** Kafka's setOrCreateConsumerOffset: set the znode, creating it and its parents when missing. */
  async commit(group: string, topic: string, partition: number, offset: bigint): Promise<void> {
    const path = consumerOffsetPath(group, topic, partition);
    const data = ConsumerOffsetZNode.encode(offset);
    await withDeadline(this.session.setOrCreate(path, data), this.timeoutMs, `the commit to ${path}`);
  }

  /** The stored offset, or undefined when the group has none for this partition. */
  async fetch(group: string, topic: string, partition: number): Promise<bigint | undefined> {
    const path = consumerOffsetPath(group, topic, partition);
    const node = await withDeadline(this.session.getIfExists(path), this.timeoutMs, `the read of ${path}`);
    return node ? ConsumerOffsetZNode.decode(node.data) : undefined;
  }

  /** The groups under /consumers (sorted). */
  async groups(): Promise<string[]> {
    return (await this.childrenIfExists(CONSUMERS_PATH)).sort();
  }

  async groupExists(group: string): Promise<boolean> {
    return (await withDeadline(this.session.exists(consumerGroupPath(group)), this.timeoutMs, consumerGroupPath(group))) !== null;
  }

  /** Every offset the group stored: topic → partition → offset (malformed znodes are skipped). */
  async groupOffsets(group: string): Promise<Map<string, Map<number, bigint>>> {
    const out = new Map<string, Map<number, bigint>>();
    const topics = await this.childrenIfExists(`${consumerGroupPath(group)}/offsets`);
    for (const topic of topics.sort()) {
      const parts = new Map<number, bigint>();
      for (const p of await this.childrenIfExists(consumerTopicOffsetsPath(group, topic))) {
        if (!/^\d+$/.test(p)) continue;
        const v = await this.fetch(group, topic, Number(p)).catch((err: unknown) => {
          if (err instanceof ZkError) throw err;
          return undefined; // a znode that is not a decimal offset
        });
        if (v !== undefined) parts.set(Number(p), v);
      }
      out.set(topic, new Map([...parts].sort((a, b) => a[0] - b[0])));
    }
    return out;
  }

  /** The registered (live) consumers: id → registration (undefined when unreadable). */
  async members(group: string): Promise<Map<string, ConsumerRegistration | undefined>> {
    const out = new Map<string, ConsumerRegistration | undefined>();
    for (const id of (await this.childrenIfExists(consumerIdsPath(group))).sort()) {
      const node = await withDeadline(this.session.getIfExists(`${consumerIdsPath(group)}/${id}`), this.timeoutMs, consumerIdsPath(group));
      if (!node) continue;
      let reg: ConsumerRegistration | undefined;
      try {
        reg = ConsumerRegistrationZNode.decode(node.data);
      } catch {
        reg = undefined;
      }
      out.set(id, reg);
    }
    return out;
  }

  /** Who owns each partition of `topic` (the owner's consumer thread id). */
  async owners(group: string, topic: string): Promise<Map<number, string>> {
    const out = new Map<number, string>();
    for (const p of await this.childrenIfExists(consumerOwnersPath(group, topic))) {
      const node = await withDeadline(this.session.getIfExists(`${consumerOwnersPath(group, topic)}/${p}`), this.timeoutMs, consumerOwnersPath(group, topic));
      if (node && /^\d+$/.test(p)) out.set(Number(p), node.data.toString('utf8'));
    }
    return out;
  }

  /** Deletes the group's whole tree (children first), as Kafka's ZkUtils.deletePathRecursive. */
  async deleteGroup(group: string): Promise<void> {
    await this.deleteRecursive(consumerGroupPath(group));
  }

  /** Deletes the group's offsets and owners of one topic (Kafka's deleteConsumerGroupInfoForTopicInZK). */
  async deleteGroupTopic(group: string, topic: string): Promise<void> {
    await this.deleteRecursive(consumerOwnersPath(group, topic));
    await this.deleteRecursive(consumerTopicOffsetsPath(group, topic));
  }

  private async deleteRecursive(path: string): Promise<void> {
    for (const child of await this.childrenIfExists(path)) await this.deleteRecursive(`${path}/${child}`);
    try {
      await withDeadline(this.session.delete(path), this.timeoutMs, path);
    } catch (err) {
      if (!isZkError(err, 'NO_NODE')) throw err;
    }
  }

  private childrenIfExists(path: string): Promise<string[]> {
    return withDeadline(this.session.childrenIfExists(path), this.timeoutMs, path);
  }
}
