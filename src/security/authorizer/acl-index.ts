/**
 * The ACLs in memory, indexed for the authorizer's decision, and the decision itself as Kafka's
 * AclAuthorizer makes it (pure: no I/O, no clock):
 *
 * - the ACLs that apply to a resource are its literal ones, the literal wildcard `*` of its type,
 *   and every prefixed pattern of its type whose prefix starts its name;
 * - none apply: `allow.everyone.if.no.acl.found` decides;
 * - a DENY for the principal (or `User:*`), the host (or `*`) and the operation (or ALL) wins;
 * - otherwise an ALLOW must match; asking DESCRIBE is also granted by READ, WRITE, DELETE or
 *   ALTER, and DESCRIBE_CONFIGS by ALTER_CONFIGS (Kafka's implied operations; denies do not imply).
 *
 * Super users are the authorizer's concern (authorizer.ts), before this.
 */
import {
  AclOperation,
  AclPermissionType,
  PatternType,
  WILDCARD,
  WILDCARD_PRINCIPAL,
  type AccessControlEntry,
  type AclBinding,
  type ResourcePattern,
  type ResourceType,
  sameEntry,
} from './acl-model.js';

/** The operations whose ALLOW grants `op` (Kafka: DESCRIBE and DESCRIBE_CONFIGS are implied). */
export function grantingOperations(op: AclOperation): readonly AclOperation[] {
  if (op === AclOperation.DESCRIBE)
    return [AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER, AclOperation.ALL];
  if (op === AclOperation.DESCRIBE_CONFIGS) return [AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS, AclOperation.ALL];
  return [op, AclOperation.ALL];
}

export type Decision = 'ALLOWED' | 'DENIED';

interface TypeIndex {
  literal: Map<string, AccessControlEntry[]>;
  /** prefix -> entries; scanned (few prefixes per type in practice; decisions are cached above). */
  prefixed: Map<string, AccessControlEntry[]>;
}

export class AclIndex {
  private readonly byType = new Map<ResourceType, TypeIndex>();

  constructor(bindings: Iterable<AclBinding> = []) {
    for (const b of bindings) this.add(b);
  }

  /** Replaces every entry of one pattern (what a ZooKeeper change notification re-reads). */
  setPattern(pattern: ResourcePattern, entries: readonly AccessControlEntry[]): void {
    const map = this.mapFor(pattern);
    if (entries.length === 0) map.delete(pattern.name);
    else map.set(pattern.name, [...entries]);
  }

  entriesOf(pattern: ResourcePattern): readonly AccessControlEntry[] {
    return this.mapFor(pattern).get(pattern.name) ?? [];
  }

  add(b: AclBinding): boolean {
    const current = this.entriesOf(b.pattern);
    if (current.some((e) => sameEntry(e, b.entry))) return false;
    this.setPattern(b.pattern, [...current, b.entry]);
    return true;
  }

  *bindings(): Generator<AclBinding> {
    for (const [resourceType, idx] of this.byType) {
      for (const [patternType, map] of [
        [PatternType.LITERAL, idx.literal],
        [PatternType.PREFIXED, idx.prefixed],
      ] as const) {
        for (const [name, entries] of map) {
          for (const entry of entries) yield { pattern: { resourceType, name, patternType }, entry };
        }
      }
    }
  }

  /** Whether any ACL exists for this resource type (authorizeByResourceType's shortcut). */
  hasAnyOfType(resourceType: ResourceType): boolean {
    const idx = this.byType.get(resourceType);
    return idx !== undefined && (idx.literal.size > 0 || idx.prefixed.size > 0);
  }

  /** The entries that apply to the named resource: literal, literal wildcard, matching prefixes. */
  matching(resourceType: ResourceType, name: string): AccessControlEntry[] {
    const idx = this.byType.get(resourceType);
    if (!idx) return [];
    const out: AccessControlEntry[] = [];
    const lit = idx.literal.get(name);
    if (lit) out.push(...lit);
    if (name !== WILDCARD) {
      const wild = idx.literal.get(WILDCARD);
      if (wild) out.push(...wild);
    }
    for (const [prefix, entries] of idx.prefixed) if (name.startsWith(prefix)) out.push(...entries);
    return out;
  }

  /** Kafka's decision for a non-super user. */
  decide(principal: string, host: string, op: AclOperation, resourceType: ResourceType, name: string, allowEveryoneIfNoAclFound: boolean): Decision {
    const acls = this.matching(resourceType, name);
    return decideOver(acls, principal, host, op, allowEveryoneIfNoAclFound);
  }

  /**
   * Kafka's authorizeByResourceType (KIP-679, used by InitProducerId without a transactional id):
   * may the principal do `op` on at least one resource of the type? An ALLOW on some pattern
   * that no DENY on the literal wildcard or a covering prefix/literal cancels.
   */
  anyAllowed(principal: string, host: string, op: AclOperation, resourceType: ResourceType, allowEveryoneIfNoAclFound: boolean): boolean {
    const idx = this.byType.get(resourceType);
    if (!idx || (idx.literal.size === 0 && idx.prefixed.size === 0)) return allowEveryoneIfNoAclFound;
    const denies = (name: string): boolean =>
      this.matching(resourceType, name).some(
        (e) => e.permissionType === AclPermissionType.DENY && entryApplies(e, principal, host) && (e.operation === op || e.operation === AclOperation.ALL),
      );
    if (denies(WILDCARD)) return false;
    const grants = grantingOperations(op);
    for (const [, map] of [
      [0, idx.literal],
      [1, idx.prefixed],
    ] as const) {
      for (const [name, entries] of map) {
        const allows = entries.some((e) => e.permissionType === AclPermissionType.ALLOW && entryApplies(e, principal, host) && grants.includes(e.operation));
        if (allows && !denies(name)) return true;
      }
    }
    return false;
  }

  private mapFor(p: ResourcePattern): Map<string, AccessControlEntry[]> {
    let idx = this.byType.get(p.resourceType);
    if (!idx) {
      idx = { literal: new Map(), prefixed: new Map() };
      this.byType.set(p.resourceType, idx);
    }
    return p.patternType === PatternType.PREFIXED ? idx.prefixed : idx.literal;
  }
}

function entryApplies(e: AccessControlEntry, principal: string, host: string): boolean {
  return (e.principal === principal || e.principal === WILDCARD_PRINCIPAL) && (e.host === host || e.host === WILDCARD);
}

/** The decision over the ACLs that apply to one resource. */
export function decideOver(
  acls: readonly AccessControlEntry[],
  principal: string,
  host: string,
  op: AclOperation,
  allowEveryoneIfNoAclFound: boolean,
): Decision {
  if (acls.length === 0) return allowEveryoneIfNoAclFound ? 'ALLOWED' : 'DENIED';
  for (const e of acls) {
    if (e.permissionType === AclPermissionType.DENY && entryApplies(e, principal, host) && (e.operation === op || e.operation === AclOperation.ALL))
      return 'DENIED';
  }
  const grants = grantingOperations(op);
  for (const e of acls) {
    if (e.permissionType === AclPermissionType.ALLOW && entryApplies(e, principal, host) && grants.includes(e.operation)) return 'ALLOWED';
  }
  return 'DENIED';
}
