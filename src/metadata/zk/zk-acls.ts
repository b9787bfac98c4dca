/**
 * ACLs in ZooKeeper, where Kafka's AclAuthorizer keeps them (ZkAclStore / ZkAclChangeStore):
 *
 * - literal patterns at `/kafka-acl/<Type>/<name>`, prefixed at
 *   `/kafka-acl-extended/prefixed/<Type>/<name>`, each `{"version":1,"acls":[{"principal":
 *   "User:bob","permissionType":"Allow","operation":"Read","host":"*"}]}`; a pattern with no ACL
 *   left has its znode deleted;
 * - every write is conditional on the version read (retried on a concurrent change) and followed
 *   by a change notification: `/kafka-acl-changes/acl_changes_<seq>` holding `Topic:orders`
 *   (literal) or `/kafka-acl-extended-changes/acl_changes_<seq>` holding
 *   `{"version":1,"resourceType":"Topic","name":"team-","patternType":"PREFIXED"}`;
 * - every broker follows both notification paths (SequentialChangeFollower) and re-reads the
 *   named pattern; notifications older than 15 minutes are purged, as Kafka does.
 */
import type { Logger } from 'pino';
import type { AclStorage, StoredAclEntry, StoredAclResource, StoredAcls } from '../acl-storage.js';
import { isZkError, type ZkSession } from './zk-session.js';
import { SequentialChangeFollower, znodeChangeSource } from './zk-change-follower.js';

export const ACL_ROOT = '/kafka-acl';
export const PREFIXED_ACL_ROOT = '/kafka-acl-extended/prefixed';
export const ACL_CHANGES = '/kafka-acl-changes';
export const EXTENDED_ACL_CHANGES = '/kafka-acl-extended-changes';
const CHANGE_PREFIX = 'acl_changes_';

type Session = Pick<ZkSession, 'getIfExists' | 'children' | 'childrenIfExists' | 'create' | 'set' | 'delete' | 'ensurePath' | 'exists' | 'on' | 'off'>;

export function aclZnodePath(r: StoredAclResource): string {
  return `${r.patternType === 'PREFIXED' ? PREFIXED_ACL_ROOT : ACL_ROOT}/${r.resourceType}/${r.name}`;
}

export function parseAclZnode(data: Buffer | string): StoredAclEntry[] {
  const text = data.toString();
  if (text.trim() === '') return [];
  const parsed = JSON.parse(text) as { version?: number; acls?: unknown };
  if (!Array.isArray(parsed.acls)) throw new Error('malformed ACL znode: no "acls" array');
  return parsed.acls.map((a) => {
    const e = a as Record<string, unknown>;
    return { principal: String(e.principal), permissionType: String(e.permissionType), operation: String(e.operation), host: String(e.host) };
  });
}

export function aclZnodeBody(acls: readonly StoredAclEntry[]): string {
  return JSON.stringify({
    version: 1,
    acls: acls.map((a) => ({ principal: a.principal, permissionType: a.permissionType, operation: a.operation, host: a.host })),
  });
}

/** The notification body Kafka writes for a changed pattern. */
export function changeNotification(r: StoredAclResource): { path: string; data: string } {
  if (r.patternType === 'LITERAL') return { path: `${ACL_CHANGES}/${CHANGE_PREFIX}`, data: `${r.resourceType}:${r.name}` };
  return {
    path: `${EXTENDED_ACL_CHANGES}/${CHANGE_PREFIX}`,
    data: JSON.stringify({ version: 1, resourceType: r.resourceType, name: r.name, patternType: r.patternType }),
  };
}

export function parseChangeNotification(root: string, data: string): StoredAclResource | undefined {
  if (root === ACL_CHANGES) {
    const colon = data.indexOf(':');
    if (colon <= 0) return undefined;
    return { resourceType: data.slice(0, colon), patternType: 'LITERAL', name: data.slice(colon + 1) };
  }
  try {
    const j = JSON.parse(data) as { resourceType?: unknown; name?: unknown; patternType?: unknown };
    if (typeof j.resourceType !== 'string' || typeof j.name !== 'string') return undefined;
    return { resourceType: j.resourceType, name: j.name, patternType: String(j.patternType).toUpperCase() === 'PREFIXED' ? 'PREFIXED' : 'LITERAL' };
  } catch {
    return undefined;
  }
}

export class ZkAcls implements AclStorage {
  private readonly listeners: ((r: StoredAclResource) => void)[] = [];
  private readonly followers: SequentialChangeFollower<string>[] = [];

  constructor(
    private readonly session: Session,
    private readonly logger?: Logger,
  ) {}

  async loadAll(): Promise<StoredAcls[]> {
    const out: StoredAcls[] = [];
    for (const [root, patternType] of [
      [ACL_ROOT, 'LITERAL'],
      [PREFIXED_ACL_ROOT, 'PREFIXED'],
    ] as const) {
      for (const resourceType of await this.session.childrenIfExists(root)) {
        for (const name of await this.session.childrenIfExists(`${root}/${resourceType}`)) {
          const resource: StoredAclResource = { resourceType, patternType, name };
          try {
            const acls = await this.load(resource);
            if (acls.length > 0) out.push({ resource, acls });
          } catch (err) {
            this.logger?.error({ path: aclZnodePath(resource), err: String(err) }, 'skipping an unreadable ACL znode');
          }
        }
      }
    }
    return out;
  }

  async load(resource: StoredAclResource): Promise<StoredAclEntry[]> {
    const node = await this.session.getIfExists(aclZnodePath(resource));
    return node ? parseAclZnode(node.data) : [];
  }

  async update(resource: StoredAclResource, change: (current: readonly StoredAclEntry[]) => StoredAclEntry[] | undefined): Promise<readonly StoredAclEntry[]> {
    const path = aclZnodePath(resource);
    for (;;) {
      const node = await this.session.getIfExists(path);
      const current = node ? parseAclZnode(node.data) : [];
      const next = change(current);
      if (next === undefined) return current;
      try {
        if (!node) {
          if (next.length === 0) return next;
          await this.session.ensurePath(path.slice(0, path.lastIndexOf('/')));
          await this.session.create(path, aclZnodeBody(next));
        } else if (next.length === 0) {
          await this.session.delete(path, node.stat.version);
        } else {
          await this.session.set(path, aclZnodeBody(next), node.stat.version);
        }
      } catch (err) {
        if (isZkError(err, 'NODE_EXISTS') || isZkError(err, 'BAD_VERSION') || isZkError(err, 'NO_NODE')) continue; // raced: re-read
        throw err;
      }
      const n = changeNotification(resource);
      await this.session.ensurePath(n.path.slice(0, n.path.lastIndexOf('/')));
      await this.session.create(n.path, n.data, 'persistent_sequential');
      return next;
    }
  }

  onChange(listener: (r: StoredAclResource) => void): void {
    this.listeners.push(listener);
  }

  /**
   * Follows both notification paths; existing notifications are processed too (re-reading a
   * pattern is harmless), so nothing announced between loadAll and now is missed.
   */
  async start(): Promise<void> {
    for (const root of [ACL_CHANGES, EXTENDED_ACL_CHANGES]) {
      await this.session.ensurePath(root);
      const f = new SequentialChangeFollower<string>({
        source: znodeChangeSource(this.session, root, CHANGE_PREFIX),
        session: this.session,
        what: root,
        ...(this.logger ? { logger: this.logger } : {}),
        onChange: (data) => {
          const r = parseChangeNotification(root, data);
          if (!r) {
            this.logger?.error({ root, data }, 'skipping an unreadable ACL change notification');
            return;
          }
          for (const l of this.listeners) l(r);
        },
      });
      this.followers.push(f);
      await f.start();
    }
  }

  close(): void {
    for (const f of this.followers) f.close();
  }
}
