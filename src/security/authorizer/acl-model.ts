/**
 * Kafka's ACL model (org.apache.kafka.common.acl / .resource): resource types, pattern types,
 * operations and permission types with Kafka's wire codes, the names Kafka prints and stores,
 * and the filters CreateAcls/DescribeAcls/DeleteAcls and kafka-acls.sh use. Pure: no I/O.
 */

export enum ResourceType {
  UNKNOWN = 0,
  ANY = 1,
  TOPIC = 2,
  GROUP = 3,
  CLUSTER = 4,
  TRANSACTIONAL_ID = 5,
  DELEGATION_TOKEN = 6,
  USER = 7,
}

export enum PatternType {
  UNKNOWN = 0,
  ANY = 1,
  MATCH = 2,
  LITERAL = 3,
  PREFIXED = 4,
}

export enum AclOperation {
  UNKNOWN = 0,
  ANY = 1,
  ALL = 2,
  READ = 3,
  WRITE = 4,
  CREATE = 5,
  DELETE = 6,
  ALTER = 7,
  DESCRIBE = 8,
  CLUSTER_ACTION = 9,
  DESCRIBE_CONFIGS = 10,
  ALTER_CONFIGS = 11,
  IDEMPOTENT_WRITE = 12,
  CREATE_TOKENS = 13,
  DESCRIBE_TOKENS = 14,
}

export enum AclPermissionType {
  UNKNOWN = 0,
  ANY = 1,
  DENY = 2,
  ALLOW = 3,
}

/** The name of the single cluster resource, as Kafka's Resource.CLUSTER_NAME. */
export const CLUSTER_NAME = 'kafka-cluster';
/** A literal resource name matching every resource of its type; also the wildcard host and principal name. */
export const WILDCARD = '*';
export const WILDCARD_PRINCIPAL = 'User:*';

/** The concrete types ACLs may be stored for. */
export const CONCRETE_RESOURCE_TYPES: readonly ResourceType[] = [
  ResourceType.TOPIC,
  ResourceType.GROUP,
  ResourceType.CLUSTER,
  ResourceType.TRANSACTIONAL_ID,
  ResourceType.DELEGATION_TOKEN,
  ResourceType.USER,
];

/** Concrete operations an ACL may grant (ALL included; ANY and UNKNOWN are filters/errors only). */
export const CONCRETE_OPERATIONS: readonly AclOperation[] = [
  AclOperation.ALL,
  AclOperation.READ,
  AclOperation.WRITE,
  AclOperation.CREATE,
  AclOperation.DELETE,
  AclOperation.ALTER,
  AclOperation.DESCRIBE,
  AclOperation.CLUSTER_ACTION,
  AclOperation.DESCRIBE_CONFIGS,
  AclOperation.ALTER_CONFIGS,
  AclOperation.IDEMPOTENT_WRITE,
  AclOperation.CREATE_TOKENS,
  AclOperation.DESCRIBE_TOKENS,
];

/** What the authorized-operations bit sets hold per resource type (Kafka's supported operations). */
export const SUPPORTED_OPERATIONS: Readonly<Partial<Record<ResourceType, readonly AclOperation[]>>> = {
  [ResourceType.TOPIC]: [
    AclOperation.READ,
    AclOperation.WRITE,
    AclOperation.CREATE,
    AclOperation.DELETE,
    AclOperation.ALTER,
    AclOperation.DESCRIBE,
    AclOperation.DESCRIBE_CONFIGS,
    AclOperation.ALTER_CONFIGS,
  ],
  [ResourceType.GROUP]: [AclOperation.READ, AclOperation.DELETE, AclOperation.DESCRIBE],
  [ResourceType.CLUSTER]: [
    AclOperation.CREATE,
    AclOperation.ALTER,
    AclOperation.DESCRIBE,
    AclOperation.CLUSTER_ACTION,
    AclOperation.DESCRIBE_CONFIGS,
    AclOperation.ALTER_CONFIGS,
    AclOperation.IDEMPOTENT_WRITE,
  ],
};

// Java enum names (TOPIC, TRANSACTIONAL_ID) and the PascalCase names Kafka stores in ZooKeeper
// and prints in AclCommand's output (Topic, TransactionalId, DescribeConfigs).
const pascal = (javaName: string): string =>
  javaName
    .toLowerCase()
    .split('_')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join('');

export function resourceTypeName(t: ResourceType): string {
  return ResourceType[t] ?? 'UNKNOWN';
}
export function operationName(o: AclOperation): string {
  return AclOperation[o] ?? 'UNKNOWN';
}
export function permissionName(p: AclPermissionType): string {
  return AclPermissionType[p] ?? 'UNKNOWN';
}
export function patternTypeName(p: PatternType): string {
  return PatternType[p] ?? 'UNKNOWN';
}
/** Topic, TransactionalId, ... (ZooKeeper paths, AclCommand's "Topic:LITERAL:orders"). */
export function resourceTypePascal(t: ResourceType): string {
  return pascal(resourceTypeName(t));
}
/** Read, DescribeConfigs, ... (ZooKeeper bodies). */
export function operationPascal(o: AclOperation): string {
  return pascal(operationName(o));
}
/** Allow, Deny (ZooKeeper bodies). */
export function permissionPascal(p: AclPermissionType): string {
  return pascal(permissionName(p));
}

const fromName = <E extends number>(values: readonly E[], nameOf: (v: E) => string) => {
  const byKey = new Map<string, E>();
  for (const v of values) byKey.set(nameOf(v).replace(/_/g, '').toLowerCase(), v);
  return (text: string): E | undefined => byKey.get(text.replace(/[_-]/g, '').toLowerCase());
};
const enumValues = <E extends number>(e: Record<string, string | number>): E[] => Object.values(e).filter((v): v is number => typeof v === 'number') as E[];

/** Case-insensitive, with or without underscores: "Read", "READ", "describe_configs", "DescribeConfigs". */
export const parseOperation = fromName(enumValues<AclOperation>(AclOperation), operationName);
export const parseResourceType = fromName(enumValues<ResourceType>(ResourceType), resourceTypeName);
export const parsePermissionType = fromName(enumValues<AclPermissionType>(AclPermissionType), permissionName);
export const parsePatternType = fromName(enumValues<PatternType>(PatternType), patternTypeName);

export interface ResourcePattern {
  readonly resourceType: ResourceType;
  readonly name: string;
  readonly patternType: PatternType;
}

export interface AccessControlEntry {
  /** "User:alice", "User:*" */
  readonly principal: string;
  /** An address, or "*" */
  readonly host: string;
  readonly operation: AclOperation;
  readonly permissionType: AclPermissionType;
}

export interface AclBinding {
  readonly pattern: ResourcePattern;
  readonly entry: AccessControlEntry;
}

/** Null fields match anything (as Kafka's filters' null). */
export interface ResourcePatternFilter {
  readonly resourceType: ResourceType;
  readonly name: string | null;
  readonly patternType: PatternType;
}
export interface AccessControlEntryFilter {
  readonly principal: string | null;
  readonly host: string | null;
  readonly operation: AclOperation;
  readonly permissionType: AclPermissionType;
}
export interface AclBindingFilter {
  readonly pattern: ResourcePatternFilter;
  readonly entry: AccessControlEntryFilter;
}

export const ANY_FILTER: AclBindingFilter = {
  pattern: { resourceType: ResourceType.ANY, name: null, patternType: PatternType.ANY },
  entry: { principal: null, host: null, operation: AclOperation.ANY, permissionType: AclPermissionType.ANY },
};

/** Why a binding cannot be stored (Kafka's CreateAcls validation), or undefined when it can. */
export function bindingProblem(b: AclBinding): string | undefined {
  const { pattern, entry } = b;
  if (!CONCRETE_RESOURCE_TYPES.includes(pattern.resourceType)) return 'Invalid resource type';
  if (pattern.patternType !== PatternType.LITERAL && pattern.patternType !== PatternType.PREFIXED) return 'Invalid pattern type';
  if (pattern.name === '') return 'Resource name should not be empty';
  if (pattern.resourceType === ResourceType.CLUSTER && pattern.name !== CLUSTER_NAME) return `The only valid name for the CLUSTER resource is ${CLUSTER_NAME}`;
  if (pattern.patternType === PatternType.PREFIXED && pattern.name === WILDCARD) return 'Prefixed resources must not be the wildcard';
  if (!CONCRETE_OPERATIONS.includes(entry.operation)) return 'Invalid operation';
  if (entry.permissionType !== AclPermissionType.ALLOW && entry.permissionType !== AclPermissionType.DENY) return 'Invalid permission type';
  const colon = entry.principal.indexOf(':');
  if (colon <= 0) return `Invalid principal ${entry.principal}`;
  if (entry.host === '') return 'Invalid host';
  return undefined;
}

/** Why a filter is unusable (INVALID_REQUEST), or undefined. */
export function filterProblem(f: AclBindingFilter): string | undefined {
  const { pattern, entry } = f;
  if (pattern.resourceType === ResourceType.UNKNOWN || ResourceType[pattern.resourceType] === undefined) return 'Invalid resource type filter';
  if (pattern.patternType === PatternType.UNKNOWN || PatternType[pattern.patternType] === undefined) return 'Invalid pattern type filter';
  if (entry.operation === AclOperation.UNKNOWN || AclOperation[entry.operation] === undefined) return 'Invalid operation filter';
  if (entry.permissionType === AclPermissionType.UNKNOWN || AclPermissionType[entry.permissionType] === undefined) return 'Invalid permission type filter';
  return undefined;
}

/** Does a stored pattern match a filter? MATCH: the patterns that would apply to the named resource. */
export function patternMatches(f: ResourcePatternFilter, p: ResourcePattern): boolean {
  if (f.resourceType !== ResourceType.ANY && f.resourceType !== p.resourceType) return false;
  if (f.patternType === PatternType.MATCH) {
    if (f.name === null) return true;
    if (p.patternType === PatternType.LITERAL) return p.name === f.name || p.name === WILDCARD;
    if (p.patternType === PatternType.PREFIXED) return f.name.startsWith(p.name);
    return false;
  }
  if (f.patternType !== PatternType.ANY && f.patternType !== p.patternType) return false;
  return f.name === null || f.name === p.name;
}

export function entryMatches(f: AccessControlEntryFilter, e: AccessControlEntry): boolean {
  if (f.principal !== null && f.principal !== e.principal) return false;
  if (f.host !== null && f.host !== e.host) return false;
  if (f.operation !== AclOperation.ANY && f.operation !== e.operation) return false;
  if (f.permissionType !== AclPermissionType.ANY && f.permissionType !== e.permissionType) return false;
  return true;
}

export function bindingMatches(f: AclBindingFilter, b: AclBinding): boolean {
  return patternMatches(f.pattern, b.pattern) && entryMatches(f.entry, b.entry);
}

/** Kafka's ResourcePattern.toString: `ResourcePattern(resourceType=TOPIC, name=orders, patternType=LITERAL)`. */
export function formatPattern(p: ResourcePattern): string {
  return `ResourcePattern(resourceType=${resourceTypeName(p.resourceType)}, name=${p.name}, patternType=${patternTypeName(p.patternType)})`;
}

/** AclCommand's line per entry: `(principal=User:bob, host=*, operation=READ, permissionType=ALLOW)`. */
export function formatEntry(e: AccessControlEntry): string {
  return `(principal=${e.principal}, host=${e.host}, operation=${operationName(e.operation)}, permissionType=${permissionName(e.permissionType)})`;
}

export function patternKey(p: ResourcePattern): string {
  return `${resourceTypePascal(p.resourceType)}:${patternTypeName(p.patternType)}:${p.name}`;
}

export function sameEntry(a: AccessControlEntry, b: AccessControlEntry): boolean {
  return a.principal === b.principal && a.host === b.host && a.operation === b.operation && a.permissionType === b.permissionType;
}
