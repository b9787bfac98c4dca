/**
 * DescribeClientQuotas and AlterClientQuotas (KIP-546) over the client entity store, with Kafka's
 * validation (ZkAdminManager's, since Fjord stores entities as Kafka's ZooKeeper mode does):
 *
 * - entity types `user` and `client-id` (a null name is the `<default>` entity); `ip` entities
 *   (connection_creation_rate, KIP-612) are not supported: describing them finds none, altering
 *   them is refused with INVALID_REQUEST saying so;
 * - describe filters: exact name (0), default (1), any specified name (2); `strict` leaves out
 *   entities that have a type the filter does not name; a type named twice, an empty or unknown
 *   type (UNSUPPORTED_VERSION, as Kafka), an ip component beside user/client-id are refused;
 * - alter: unknown keys (SCRAM credentials included: they have their own API) are
 *   INVALID_REQUEST "Invalid configuration key k"; LONG keys must be whole numbers; removals of
 *   absent keys are no-ops; validate_only checks without storing. Each entry succeeds or fails
 *   alone; an entity's other configs (SCRAM credentials) are kept.
 */
import { ErrorCode } from '../../protocol/errors.js';
import { entityPath, parseEntityPath, type ClientEntity, type ClientEntityConfigStore } from '../../metadata/client-entity-configs.js';
import { isQuotaConfig, parseQuotaValue, quotaValueText, QuotaConfigError } from '../../config/quota-configs.js';
import { messageOf } from '../../common/errors.js';

export const USER = 'user';
export const CLIENT_ID = 'client-id';
export const IP = 'ip';

export const MATCH_EXACT = 0;
export const MATCH_DEFAULT = 1;
export const MATCH_SPECIFIED = 2;

export interface QuotaEntityPart {
  entityType: string;
  /** null = the default entity of that type. */
  entityName: string | null;
}

export interface FilterComponent {
  entityType: string;
  matchType: number;
  match: string | null;
}

export interface DescribedQuotas {
  errorCode: number;
  errorMessage: string | null;
  entries: { entity: QuotaEntityPart[]; values: { key: string; value: number }[] }[] | null;
}

class QuotaRequestError extends Error {
  constructor(
    readonly errorCode: number,
    message: string,
  ) {
    super(message);
  }
}

/** The parts of a stored entity, user first (Kafka's order). */
export function entityParts(e: ClientEntity): QuotaEntityPart[] {
  const parts: QuotaEntityPart[] = [];
  if (e.user !== undefined) parts.push({ entityType: USER, entityName: e.user });
  if (e.clientId !== undefined) parts.push({ entityType: CLIENT_ID, entityName: e.clientId });
  return parts;
}

/** name: undefined = type absent from the entity; null = default; else the name. */
function matches(component: FilterComponent | undefined, name: string | null | undefined, strict: boolean): boolean {
  if (component === undefined) return name === undefined || !strict;
  if (name === undefined) return false;
  if (component.matchType === MATCH_SPECIFIED) return true;
  if (component.matchType === MATCH_DEFAULT) return name === null;
  return name === component.match;
}

export function describeClientQuotas(
  store: Pick<ClientEntityConfigStore, 'entries'>,
  components: readonly FilterComponent[],
  strict: boolean,
): DescribedQuotas {
  let user: FilterComponent | undefined;
  let client: FilterComponent | undefined;
  let ip: FilterComponent | undefined;
  try {
    for (const c of components) {
      if (c.matchType !== MATCH_EXACT && c.matchType !== MATCH_DEFAULT && c.matchType !== MATCH_SPECIFIED) {
        throw new QuotaRequestError(ErrorCode.INVALID_REQUEST, `Unexpected match type: ${c.matchType}`);
      }
      if (c.matchType === MATCH_EXACT && c.match === null)
        throw new QuotaRequestError(ErrorCode.INVALID_REQUEST, `An exact match of ${c.entityType} needs a name`);
      if (c.entityType === USER) {
        if (user) throw new QuotaRequestError(ErrorCode.INVALID_REQUEST, 'Duplicate user filter component entity type');
        user = c;
      } else if (c.entityType === CLIENT_ID) {
        if (client) throw new QuotaRequestError(ErrorCode.INVALID_REQUEST, 'Duplicate client filter component entity type');
        client = c;
      } else if (c.entityType === IP) {
        if (ip) throw new QuotaRequestError(ErrorCode.INVALID_REQUEST, 'Duplicate ip filter component entity type');
        ip = c;
      } else if (c.entityType === '') {
        throw new QuotaRequestError(ErrorCode.INVALID_REQUEST, 'Unexpected empty filter component entity type');
      } else {
        throw new QuotaRequestError(ErrorCode.UNSUPPORTED_VERSION, `Custom entity type '${c.entityType}' not supported`);
      }
    }
    if ((user || client) && ip) {
      throw new QuotaRequestError(
        ErrorCode.INVALID_REQUEST,
        'Invalid entity filter component combination, IP filter component should not be used with user or clientId filter component.',
      );
    }
  } catch (err) {
    if (err instanceof QuotaRequestError) return { errorCode: err.errorCode, errorMessage: err.message, entries: null };
    throw err;
  }
  const entries: NonNullable<DescribedQuotas['entries']> = [];
  // Fjord keeps no ip entities: an ip filter finds none.
  if (ip) return { errorCode: ErrorCode.NONE, errorMessage: null, entries };
  for (const [path, configs] of store.entries()) {
    const e = parseEntityPath(path);
    if (e === undefined || !matches(user, e.user, strict) || !matches(client, e.clientId, strict)) continue;
    const values = Object.entries(configs)
      .filter(([k]) => isQuotaConfig(k))
      .map(([key, text]) => ({ key, value: parseQuotaValue(text) }))
      .filter((v) => !Number.isNaN(v.value));
    if (values.length > 0) entries.push({ entity: entityParts(e), values });
  }
  return { errorCode: ErrorCode.NONE, errorMessage: null, entries };
}

export interface QuotaAlteration {
  entity: readonly QuotaEntityPart[];
  ops: readonly { key: string; value: number; remove: boolean }[];
}

export interface AlterationResult {
  errorCode: number;
  errorMessage: string | null;
  entity: QuotaEntityPart[];
}

function entityOf(parts: readonly QuotaEntityPart[]): ClientEntity {
  if (parts.length === 0) throw new QuotaRequestError(ErrorCode.INVALID_REQUEST, 'Invalid empty client quota entity');
  const e: ClientEntity = {};
  let ip = false;
  for (const p of parts) {
    if (p.entityType === USER) {
      if (e.user !== undefined) throw new QuotaRequestError(ErrorCode.INVALID_REQUEST, 'Duplicate user entity');
      e.user = p.entityName;
    } else if (p.entityType === CLIENT_ID) {
      if (e.clientId !== undefined) throw new QuotaRequestError(ErrorCode.INVALID_REQUEST, 'Duplicate client-id entity');
      e.clientId = p.entityName;
    } else if (p.entityType === IP) {
      ip = true;
    } else {
      throw new QuotaRequestError(ErrorCode.INVALID_REQUEST, `Unhandled client quota entity type: ${p.entityType}`);
    }
  }
  if (ip && (e.user !== undefined || e.clientId !== undefined)) {
    throw new QuotaRequestError(
      ErrorCode.INVALID_REQUEST,
      'Invalid quota entity combination, IP entity should not be combined with User or ClientId entities.',
    );
  }
  if (ip) throw new QuotaRequestError(ErrorCode.INVALID_REQUEST, 'IP quotas (connection_creation_rate) are not supported by this broker');
  return e;
}

/** Applies each entry on its own; resolves once every valid one is stored (validate_only: checked only). */
export async function alterClientQuotas(
  store: Pick<ClientEntityConfigStore, 'get' | 'set'>,
  entries: readonly QuotaAlteration[],
  validateOnly: boolean,
): Promise<AlterationResult[]> {
  const results: AlterationResult[] = [];
  for (const entry of entries) {
    const entity = entry.entity.map((p) => ({ entityType: p.entityType, entityName: p.entityName }));
    try {
      const path = entityPath(entityOf(entry.entity));
      const configs: Record<string, string> = { ...store.get(path) };
      for (const op of entry.ops) {
        if (!isQuotaConfig(op.key)) throw new QuotaRequestError(ErrorCode.INVALID_REQUEST, `Invalid configuration key ${op.key}`);
        if (op.remove) delete configs[op.key];
        else configs[op.key] = quotaValueText(op.key, op.value);
      }
      if (!validateOnly) await store.set(path, configs);
      results.push({ errorCode: ErrorCode.NONE, errorMessage: null, entity });
    } catch (err) {
      if (err instanceof QuotaRequestError) results.push({ errorCode: err.errorCode, errorMessage: err.message, entity });
      else if (err instanceof QuotaConfigError) results.push({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: err.message, entity });
      else results.push({ errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: messageOf(err), entity });
    }
  }
  return results;
}
