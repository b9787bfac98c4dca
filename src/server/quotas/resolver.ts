/**
 * Which quota applies to a (user, client id) pair, as Kafka's default quota callback decides:
 * for each quota key, the most specific entity that sets that key wins, in this order —
 *   users/<u>/clients/<c>, users/<u>/clients/<default>, users/<u>,
 *   users/<default>/clients/<c>, users/<default>/clients/<default>, users/<default>,
 *   clients/<c>, clients/<default>.
 * The winning entity also says who shares the measured rate (Kafka's metric tags): a quota on
 * users/<u> is shared by all of u's client ids, users/<default> gives each user their own rate,
 * clients/<default> each client id its own, and so on.
 *
 * Pure: `lookup` returns an entity's configs by path (the ClientEntityConfigStore's `get`).
 */
import { entityPath } from '../../metadata/client-entity-configs.js';
import { parseQuotaValue } from '../../config/quota-configs.js';

export interface ResolvedQuota {
  /** The quota's bound (bytes/s, or percent for request_percentage). */
  bound: number;
  /** The entity path that set it, e.g. `users/<default>/clients/app`. */
  entity: string;
  /** Who shares one measured rate: `user` / `clientId` are '' when not part of the key. */
  sensorUser: string;
  sensorClientId: string;
}

type Lookup = (path: string) => Readonly<Record<string, string>>;

/** The candidates in precedence order: [entity path, shares per user?, shares per client id?]. */
export function candidateEntities(user: string, clientId: string): [string, boolean, boolean][] {
  return [
    [entityPath({ user, clientId }), true, true],
    [entityPath({ user, clientId: null }), true, true],
    [entityPath({ user }), true, false],
    [entityPath({ user: null, clientId }), true, true],
    [entityPath({ user: null, clientId: null }), true, true],
    [entityPath({ user: null }), true, false],
    [entityPath({ clientId }), false, true],
    [entityPath({ clientId: null }), false, true],
  ];
}

/** The quota for `key` of user `user` (the principal's name) with client id `clientId`; undefined = unlimited. */
export function resolveQuota(lookup: Lookup, user: string, clientId: string, key: string): ResolvedQuota | undefined {
  for (const [path, byUser, byClient] of candidateEntities(user, clientId)) {
    const text = lookup(path)[key];
    if (text === undefined) continue;
    const bound = parseQuotaValue(text);
    if (Number.isNaN(bound)) continue; // unreadable (only a hand-edited znode can hold one): ignored
    return { bound, entity: path, sensorUser: byUser ? user : '', sensorClientId: byClient ? clientId : '' };
  }
  return undefined;
}
