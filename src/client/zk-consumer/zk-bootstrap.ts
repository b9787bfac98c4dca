/**
 * What a ZooKeeper consumer settles before it joins its group: its own id, and the brokers to
 * fetch from (found in /brokers/ids, as Kafka 0.8's consumer found them).
 */
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import type { ZkSession } from '../../metadata/zk/zk-session.js';
import { BrokerIdZNode } from '../../metadata/zk/zk-data.js';
import { BROKER_IDS_PATH } from '../../metadata/zk/zk-paths.js';

/** Kafka 0.8's consumer id: `<group>_<hostname>-<timestampMs>-<first 8 hex digits of a uuid>`. */
export function generateConsumerId(groupId: string, host = hostname(), nowMs = Date.now()): string {
  return `${groupId}_${host}-${nowMs}-${randomBytes(4).toString('hex')}`;
}

/** The brokers registered in /brokers/ids as `host:port` (PLAINTEXT endpoints first). */
export async function brokersFromZooKeeper(zk: ZkSession): Promise<string[]> {
  const ids = await zk.childrenIfExists(BROKER_IDS_PATH);
  const out: string[] = [];
  for (const id of ids) {
    const got = await zk.getIfExists(`${BROKER_IDS_PATH}/${id}`);
    if (!got || !/^\d+$/.test(id)) continue;
    const reg = BrokerIdZNode.decode(Number(id), got.data);
    const ep = reg.endpoints.find((e) => e.securityProtocol === 'PLAINTEXT') ?? reg.endpoints[0];
    if (ep) out.push(ep.host.includes(':') ? `[${ep.host}]:${ep.port}` : `${ep.host}:${ep.port}`);
  }
  return out;
}
