/**
 * The broker's authorizer, as Kafka's AclAuthorizer: the ACLs of an AclStorage held in memory
 * (AclIndex), `super.users`, `allow.everyone.if.no.acl.found`, decisions cached per
 * (principal, host, operation, resource) and dropped whenever any ACL changes, and Kafka's
 * authorizer log line for each denial (info) and grant (debug).
 *
 * Writes (CreateAcls/DeleteAcls) go through the storage, one resource at a time, conditionally
 * (ZooKeeper's version), then update this broker's view; other brokers follow the storage's
 * change notifications (`onChange`).
 */
import type { Logger } from 'pino';
import type { AclStorage, StoredAclEntry, StoredAclResource } from '../../metadata/acl-storage.js';
import { principalToString, type KafkaPrincipal } from '../principal.js';
import { AclIndex } from './acl-index.js';
import {
  AclOperation,
  AclPermissionType,
  PatternType,
  ResourceType,
  bindingMatches,
  bindingProblem,
  operationPascal,
  parseOperation,
  parsePermissionType,
  parseResourceType,
  patternTypeName,
  permissionPascal,
  resourceTypePascal,
  sameEntry,
  type AccessControlEntry,
  type AclBinding,
  type AclBindingFilter,
  type ResourcePattern,
} from './acl-model.js';
import { messageOf } from '../../common/errors.js';

export const KAFKA_AUTHORIZER_CLASSES: readonly string[] = [
  'kafka.security.authorizer.AclAuthorizer',
  'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
];

/** `super.users`: semicolon-separated principals, blanks ignored (Kafka's parsing). */
export function parseSuperUsers(text: string | null | undefined): string[] {
  if (!text) return [];
  return text
    .split(';')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

export interface AuthorizerOptions {
  storage: AclStorage;
  superUsers: readonly string[];
  allowEveryoneIfNoAclFound: boolean;
  logger?: Logger;
  /** Decisions cached before the cache is dropped and started again (bounds memory). */
  cacheEntries?: number;
  /** Follow other brokers' changes (default true); kafka-acls.sh writing ZooKeeper directly does not. */
  follow?: boolean;
}

export class AclException extends Error {}

// A connection keeps its principal object, so its text is built once, not on every check.
const principalTexts = new WeakMap<KafkaPrincipal, string>();
function principalText(p: KafkaPrincipal): string {
  let text = principalTexts.get(p);
  if (text === undefined) principalTexts.set(p, (text = principalToString(p)));
  return text;
}

export function toStoredResource(p: ResourcePattern): StoredAclResource {
  return { resourceType: resourceTypePascal(p.resourceType), patternType: p.patternType === PatternType.PREFIXED ? 'PREFIXED' : 'LITERAL', name: p.name };
}
export function toStoredEntry(e: AccessControlEntry): StoredAclEntry {
  return { principal: e.principal, permissionType: permissionPascal(e.permissionType), operation: operationPascal(e.operation), host: e.host };
}
export function fromStoredResource(r: StoredAclResource): ResourcePattern | undefined {
  const resourceType = parseResourceType(r.resourceType);
  if (resourceType === undefined) return undefined;
  return { resourceType, name: r.name, patternType: r.patternType === 'PREFIXED' ? PatternType.PREFIXED : PatternType.LITERAL };
}
export function fromStoredEntry(e: StoredAclEntry): AccessControlEntry | undefined {
  const operation = parseOperation(e.operation);
  const permissionType = parsePermissionType(e.permissionType);
  if (operation === undefined || permissionType === undefined || typeof e.principal !== 'string' || typeof e.host !== 'string') return undefined;
  return { principal: e.principal, host: e.host, operation, permissionType };
}

export class Authorizer {
  private readonly index = new AclIndex();
  private readonly superUsers: ReadonlySet<string>;
  private readonly cache = new Map<string, boolean>();
  private readonly cacheEntries: number;

  private constructor(private readonly opts: AuthorizerOptions) {
    this.superUsers = new Set(opts.superUsers);
    this.cacheEntries = opts.cacheEntries ?? 100_000;
  }

  static async open(opts: AuthorizerOptions): Promise<Authorizer> {
    const a = new Authorizer(opts);
    // Re-reads are applied one at a time, in notification order, so an older read never wins.
    let chain: Promise<void> = Promise.resolve();
    opts.storage.onChange?.((resource) => {
      chain = chain
        .then(() => opts.storage.load(resource))
        .then(
          (acls) => a.applyStored(resource, acls),
          (err: unknown) => opts.logger?.warn({ resource, err: String(err) }, 'cannot re-read changed ACLs'),
        );
    });
    for (const stored of await opts.storage.loadAll()) a.applyStored(stored.resource, stored.acls);
    if (opts.follow !== false) await opts.storage.start?.();
    return a;
  }

  close(): void {
    this.opts.storage.close?.();
  }

  get allowEveryoneIfNoAclFound(): boolean {
    return this.opts.allowEveryoneIfNoAclFound;
  }

  isSuperUser(principal: KafkaPrincipal): boolean {
    return this.superUsers.has(principalToString(principal));
  }

  /**
   * May `principal` from `host` do `op` on the resource? `requestName` only feeds the log line.
   * Cached per (principal, host, op, type, name) until an ACL changes.
   */
  authorize(
    principal: KafkaPrincipal,
    host: string,
    op: AclOperation,
    resourceType: ResourceType,
    name: string,
    requestName = '',
    logIfDenied = true,
  ): boolean {
    const p = principalText(principal);
    const key = `${p}\u0000${host}\u0000${op}\u0000${resourceType}\u0000${name}`;
    let allowed = this.cache.get(key);
    if (allowed === undefined) {
      allowed = this.superUsers.has(p) || this.index.decide(p, host, op, resourceType, name, this.opts.allowEveryoneIfNoAclFound) === 'ALLOWED';
      if (this.cache.size >= this.cacheEntries) this.cache.clear();
      this.cache.set(key, allowed);
    }
    if (logIfDenied || allowed) this.logDecision(allowed, p, host, op, resourceType, name, requestName);
    return allowed;
  }

  /** Kafka's authorizeByResourceType: `op` allowed on at least one resource of the type. */
  authorizeByResourceType(principal: KafkaPrincipal, host: string, op: AclOperation, resourceType: ResourceType): boolean {
    const p = principalToString(principal);
    if (this.superUsers.has(p)) return true;
    return this.index.anyAllowed(p, host, op, resourceType, this.opts.allowEveryoneIfNoAclFound);
  }

  /** Every binding a filter matches (DescribeAcls). */
  describe(filter: AclBindingFilter): AclBinding[] {
    const out: AclBinding[] = [];
    for (const b of this.index.bindings()) if (bindingMatches(filter, b)) out.push(b);
    return out;
  }

  /** CreateAcls: one result per binding, in order (undefined = created or already there). */
  async create(bindings: readonly AclBinding[]): Promise<(AclException | undefined)[]> {
    const results: (AclException | undefined)[] = bindings.map((b) => {
      const problem = bindingProblem(b);
      return problem === undefined ? undefined : new AclException(problem);
    });
    // One conditional update per resource, with every entry added to it.
    const byResource = new Map<string, { pattern: ResourcePattern; entries: AccessControlEntry[]; idx: number[] }>();
    bindings.forEach((b, i) => {
      if (results[i] !== undefined) return;
      const key = `${b.pattern.resourceType}:${b.pattern.patternType}:${b.pattern.name}`;
      let group = byResource.get(key);
      if (!group) byResource.set(key, (group = { pattern: b.pattern, entries: [], idx: [] }));
      group.entries.push(b.entry);
      group.idx.push(i);
    });
    for (const group of byResource.values()) {
      try {
        const stored = await this.opts.storage.update(toStoredResource(group.pattern), (current) => {
          const entries = current.map(fromStoredEntry).filter((e): e is AccessControlEntry => e !== undefined);
          const toAdd = group.entries.filter((e, i) => !entries.some((c) => sameEntry(c, e)) && group.entries.findIndex((o) => sameEntry(o, e)) === i);
          if (toAdd.length === 0) return undefined;
          return [...current, ...toAdd.map(toStoredEntry)];
        });
        this.applyStored(toStoredResource(group.pattern), stored);
      } catch (err) {
        for (const i of group.idx) results[i] = new AclException(`Failed to create ACLs: ${messageOf(err)}`);
      }
    }
    return results;
  }

  /** DeleteAcls: per filter, the bindings removed (or the failure). */
  async delete(filters: readonly AclBindingFilter[]): Promise<{ deleted: AclBinding[]; error?: AclException }[]> {
    const results: { deleted: AclBinding[]; error?: AclException }[] = filters.map(() => ({ deleted: [] }));
    const patterns = new Map<string, ResourcePattern>();
    for (const f of filters) {
      for (const b of this.index.bindings()) {
        if (bindingMatches(f, b)) patterns.set(`${b.pattern.resourceType}:${b.pattern.patternType}:${b.pattern.name}`, b.pattern);
      }
    }
    for (const pattern of patterns.values()) {
      try {
        const removedHere: { filter: number; entry: AccessControlEntry }[] = [];
        const stored = await this.opts.storage.update(toStoredResource(pattern), (current) => {
          removedHere.length = 0;
          const keep: StoredAclEntry[] = [];
          for (const s of current) {
            const e = fromStoredEntry(s);
            const fi = e === undefined ? -1 : filters.findIndex((f) => bindingMatches(f, { pattern, entry: e }));
            if (fi >= 0 && e) {
              // Kafka reports a removed binding under every filter that matches it.
              filters.forEach((f, j) => {
                if (bindingMatches(f, { pattern, entry: e })) removedHere.push({ filter: j, entry: e });
              });
            } else keep.push(s);
          }
          return keep.length === current.length ? undefined : keep;
        });
        this.applyStored(toStoredResource(pattern), stored);
        for (const r of removedHere) results[r.filter]!.deleted.push({ pattern, entry: r.entry });
      } catch (err) {
        filters.forEach((f, j) => {
          if ([...this.index.entriesOf(pattern)].some((e) => bindingMatches(f, { pattern, entry: e }))) {
            results[j]!.error = new AclException(`Failed to delete ACLs: ${messageOf(err)}`);
          }
        });
      }
    }
    return results;
  }

  /** Replaces this broker's view of one resource (after a write here or a change notification). */
  applyStored(resource: StoredAclResource, acls: readonly StoredAclEntry[]): void {
    const pattern = fromStoredResource(resource);
    if (!pattern) {
      this.opts.logger?.warn({ resource }, 'ignoring ACLs of an unknown resource type');
      return;
    }
    const entries = acls.map(fromStoredEntry).filter((e): e is AccessControlEntry => e !== undefined);
    this.index.setPattern(pattern, entries);
    this.cache.clear();
  }

  private logDecision(allowed: boolean, p: string, host: string, op: AclOperation, resourceType: ResourceType, name: string, requestName: string): void {
    const log = this.opts.logger;
    if (!log) return;
    if (allowed && !log.isLevelEnabled('debug')) return;
    // Kafka's kafka.authorizer.logger line.
    const line = `Principal = ${p} is ${allowed ? 'Allowed' : 'Denied'} Operation = ${operationPascal(op)} from host = ${host} on resource = ${resourceTypePascal(resourceType)}:${patternTypeName(PatternType.LITERAL)}:${name}${requestName ? ` for request = ${requestName}` : ''} with resourceRefCount = 1`;
    if (allowed) log.debug(line);
    else log.info(line);
  }
}

export { AclOperation, AclPermissionType, ResourceType };
