/**
 * Admin's client quota calls (KIP-546): DescribeClientQuotas and AlterClientQuotas, sent to any
 * broker (each stores them where every broker sees them).
 */
import { Api } from './apis.js';
import type { Cluster } from './cluster.js';
import { KafkaError } from './errors.js';

/** One part of a quota entity: entityType 'user' | 'client-id' | 'ip'; entityName null = the default. */
export interface QuotaEntityComponent {
  entityType: string;
  entityName: string | null;
}

/** matchType: 0 exact name (match), 1 the default entity, 2 any specified name (Kafka's ClientQuotaFilterComponent). */
export interface QuotaFilterComponent {
  entityType: string;
  matchType: 0 | 1 | 2;
  match: string | null;
}

export interface ClientQuotaEntry {
  entity: QuotaEntityComponent[];
  values: Map<string, number>;
}

export interface ClientQuotaAlteration {
  entity: QuotaEntityComponent[];
  /** value null removes the key. */
  ops: { key: string; value: number | null }[];
}

export async function describeClientQuotas(cluster: Cluster, components: readonly QuotaFilterComponent[], strict: boolean): Promise<ClientQuotaEntry[]> {
  const conn = await cluster.anyConnection();
  const resp = await conn.send(Api.DescribeClientQuotas, { components: [...components], strict });
  if (resp.errorCode !== 0) throw new KafkaError(resp.errorCode, resp.errorMessage ?? undefined);
  return (resp.entries ?? []).map((e) => ({
    entity: e.entity.map((p) => ({ entityType: p.entityType, entityName: p.entityName })),
    values: new Map(e.values.map((v) => [v.key, v.value])),
  }));
}

/** Resolves when every alteration succeeded; otherwise throws the first entry's error. */
export async function alterClientQuotas(cluster: Cluster, entries: readonly ClientQuotaAlteration[], validateOnly = false): Promise<void> {
  const conn = await cluster.anyConnection();
  const resp = await conn.send(Api.AlterClientQuotas, {
    entries: entries.map((e) => ({ entity: e.entity, ops: e.ops.map((o) => ({ key: o.key, value: o.value ?? 0, remove: o.value === null })) })),
    validateOnly,
  });
  for (const r of resp.entries) if (r.errorCode !== 0) throw new KafkaError(r.errorCode, r.errorMessage ?? undefined);
}
