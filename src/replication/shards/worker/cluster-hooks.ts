/**
 * What a shard's ReplicaManager takes in cluster mode (docs/threads.md step 3) that is not plain
 * data: the ISR writer, the test interceptor, where a leader listens, and meta.properties. Shard
 * 0, on the main thread, gets the broker's own; a worker gets stand-ins that ask the main thread
 * (main-asks.ts) and its own table of the live brokers' endpoints (posted after each UpdateMetadata).
 */
import type { IsrWriter } from '../../partition/partition.js';
import type { InterBrokerInterceptor } from '../../../client/inter-broker-interceptor.js';
import type { ClientSecurity, ClientTls } from '../../../security/client-security.js';
import type { MainAsks } from './main-asks.js';
import type { ClusterShardInit } from './shard-protocol.js';

export interface ClusterHooks {
  isrWriter: IsrWriter;
  interceptor?: InterBrokerInterceptor;
  /** Shard 0: the image's endpoints (a worker reads the ones posted to it). */
  brokerEndpoint?: (brokerId: number) => { host: string; port: number } | undefined;
  /** Shard 0 only: the main thread writes meta.properties into each log directory, as the single-threaded broker does. */
  metaProperties?: Record<string, string>;
}

/** A worker's hooks: every ISR write and every interceptor call goes to the main thread. */
export function workerClusterHooks(cluster: ClusterShardInit, asks: MainAsks): ClusterHooks {
  return { isrWriter: asks.isrWriter(), ...(cluster.intercepted ? { interceptor: asks.interceptor() } : {}) };
}

/** TLS material back as Buffers: structured clone hands a worker plain Uint8Arrays. */
export function restoredSecurity(s: ClientSecurity | undefined): ClientSecurity | undefined {
  if (!s?.tls) return s;
  const bytes = (v: string | Uint8Array | undefined) => (v === undefined || typeof v === 'string' ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength));
  const tls: ClientTls = { ...s.tls };
  for (const k of ['ca', 'cert', 'key'] as const) {
    const v = bytes(s.tls[k]);
    if (v !== undefined) tls[k] = v;
  }
  if (s.tls.pfx) tls.pfx = bytes(s.tls.pfx) as Buffer;
  return { ...s, tls };
}
