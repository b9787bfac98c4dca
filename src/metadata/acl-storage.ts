/**
 * Where ACLs are kept, in the shape Kafka stores them: one record per resource pattern
 * (`Topic` + LITERAL + `orders`) holding its entries as Kafka writes them to ZooKeeper
 * (`{"principal":"User:bob","permissionType":"Allow","operation":"Read","host":"*"}`).
 * Embedded: one JSON file beside the metadata file (embedded/embedded-acls.ts). Cluster mode:
 * `/kafka-acl/<Type>/<name>` and `/kafka-acl-extended/prefixed/<Type>/<name>` with change
 * notifications every broker follows (zk/zk-acls.ts). The authorizer (src/security/authorizer)
 * turns these strings into its model.
 */

export interface StoredAclResource {
  /** Kafka's PascalCase type name: Topic, Group, Cluster, TransactionalId, DelegationToken, User. */
  readonly resourceType: string;
  readonly patternType: 'LITERAL' | 'PREFIXED';
  readonly name: string;
}

export interface StoredAclEntry {
  readonly principal: string;
  /** Allow | Deny */
  readonly permissionType: string;
  /** Read, Write, DescribeConfigs, ... */
  readonly operation: string;
  readonly host: string;
}

export interface StoredAcls {
  readonly resource: StoredAclResource;
  readonly acls: readonly StoredAclEntry[];
}

export interface AclStorage {
  loadAll(): Promise<StoredAcls[]>;
  /** One resource's entries as stored now ([] when none). */
  load(resource: StoredAclResource): Promise<StoredAclEntry[]>;
  /**
   * Changes one resource's entries: `change` gets the stored entries and returns the new ones
   * (undefined: leave them). Conditional on the version read (retried on a concurrent change),
   * durable and announced to every broker before it resolves; returns what is stored after.
   */
  update(resource: StoredAclResource, change: (current: readonly StoredAclEntry[]) => StoredAclEntry[] | undefined): Promise<readonly StoredAclEntry[]>;
  /** Cluster mode: called with a resource another broker or tool changed (re-read it). */
  onChange?(listener: (resource: StoredAclResource) => void): void;
  /** Cluster mode: starts following change notifications (after loadAll and onChange). */
  start?(): Promise<void>;
  close?(): void;
}
