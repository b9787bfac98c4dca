/**
 * The znodes of Kafka 0.8's ZooKeeper consumer (`/consumers/<g>/...`): a member's registration
 * and a partition's committed offset, as ZookeeperConsumerConnector writes them. Apart from
 * zk-data.ts because only the old consumer and the offset tools use them, not the broker.
 */

import { parseObject, utf8 } from './znode-json.js';

/** `/consumers/<g>/offsets/<t>/<p>`: the offset as decimal text (the seed shows `1`). */
export const ConsumerOffsetZNode = {
  encode: (offset: bigint): Buffer => Buffer.from(String(offset)),
  decode(data: Buffer): bigint {
    const t = utf8(data).trim();
    if (!/^-?\d+$/.test(t)) throw new Error(`malformed consumer offset znode: ${JSON.stringify(t.slice(0, 50))}`);
    return BigInt(t);
  },
};

/**
 * `/consumers/<g>/ids/<consumerId>`, as Kafka 0.8's ZookeeperConsumerConnector writes it:
 * `{"version":1,"subscription":{"bigdata":1},"pattern":"static","timestamp":"1482765213478"}`
 * (subscription: topic, or a regex for the white_list/black_list patterns, → stream count).
 */
export interface ConsumerRegistration {
  subscription: Record<string, number>;
  pattern: 'static' | 'white_list' | 'black_list';
  timestampMs: number;
}
export const ConsumerRegistrationZNode = {
  encode: (r: ConsumerRegistration): Buffer =>
    Buffer.from(JSON.stringify({ version: 1, subscription: r.subscription, pattern: r.pattern, timestamp: String(r.timestampMs) })),
  decode(data: Buffer): ConsumerRegistration {
    const o = parseObject(data, 'consumer registration');
    const sub = o.subscription;
    if (typeof sub !== 'object' || sub === null || Array.isArray(sub)) throw new Error('malformed consumer registration znode: no subscription');
    const subscription: Record<string, number> = {};
    for (const [k, v] of Object.entries(sub as Record<string, unknown>)) {
      if (typeof v !== 'number' || !Number.isInteger(v) || v < 1)
        throw new Error(`malformed consumer registration znode: stream count of ${JSON.stringify(k)}`);
      subscription[k] = v;
    }
    const pattern = o.pattern === 'white_list' || o.pattern === 'black_list' ? o.pattern : 'static';
    return { subscription, pattern, timestampMs: Number(o.timestamp ?? 0) };
  },
};
