/**
 * The security pages' API: ACLs (DescribeAcls, CreateAcls, DeleteAcls), SCRAM users
 * (DescribeUserScramCredentials, AlterUserScramCredentials) and client quotas
 * (DescribeClientQuotas, AlterClientQuotas), through the Admin of whoever is logged in: the
 * broker decides who may (a refusal comes back as its authorization error, api-router.ts maps
 * it to 403). Enum values travel by Kafka's names (TOPIC, LITERAL, READ, ALLOW). A SCRAM
 * password goes one way only: into the admin client, which sends the broker a salted hash.
 */
import { KafkaError, type Admin } from '../client/index.js';
import { alterUserScramCredentials, describeUserScramCredentials } from '../client/admin-scram.js';
import {
  type AclOperation,
  type AclPermissionType,
  ANY_FILTER,
  operationName,
  parseOperation,
  parsePatternType,
  parsePermissionType,
  parseResourceType,
  type PatternType,
  patternTypeName,
  permissionName,
  resourceTypeName,
  type ResourceType,
  type AclBinding,
} from '../security/authorizer/acl-model.js';
import type { ApiRequest } from './api-router.js';
import { badRequest } from './console-error.js';

export type Route = [method: string, pattern: RegExp, handler: (req: ApiRequest, params: string[]) => Promise<unknown>];

export interface AclRow {
  resourceType: string;
  resourceName: string;
  patternType: string;
  principal: string;
  host: string;
  operation: string;
  permissionType: string;
}

const SCRAM_MECHANISMS = ['SCRAM-SHA-256', 'SCRAM-SHA-512'] as const;
type ScramMechanism = (typeof SCRAM_MECHANISMS)[number];
/** The entity types of client quotas (Kafka's ClientQuotaEntity). */
const QUOTA_ENTITY_TYPES = ['user', 'client-id', 'ip'];

/** The routes under /api for these pages; `admin` is the caller's (the session's) Admin. */
export function securityRoutes(admin: () => Admin): Route[] {
  return [
    ['GET', /^\/acls$/, () => listAcls(admin())],
    ['POST', /^\/acls$/, (r) => createAcl(admin(), aclBody(r.body))],
    ['DELETE', /^\/acls$/, (r) => deleteAcl(admin(), aclBody(r.body))],
    ['GET', /^\/users$/, () => listUsers(admin())],
    ['POST', /^\/users$/, (r) => upsertUser(admin(), r.body)],
    ['DELETE', /^\/users\/([^/]+)\/(SCRAM-SHA-(?:256|512))$/, (_r, [user, mechanism]) => deleteUser(admin(), user!, mechanism as ScramMechanism)],
    ['GET', /^\/quotas$/, () => listQuotas(admin())],
    ['PUT', /^\/quotas$/, (r) => alterQuota(admin(), r.body)],
  ];
}

const row = (b: AclBinding): AclRow => ({
  resourceType: resourceTypeName(b.pattern.resourceType),
  resourceName: b.pattern.name,
  patternType: patternTypeName(b.pattern.patternType),
  principal: b.entry.principal,
  host: b.entry.host,
  operation: operationName(b.entry.operation),
  permissionType: permissionName(b.entry.permissionType),
});

async function listAcls(admin: Admin): Promise<AclRow[]> {
  const bindings = await admin.describeAcls(ANY_FILTER);
  return bindings
    .map(row)
    .sort((a, b) => `${a.resourceType}\0${a.resourceName}\0${a.principal}`.localeCompare(`${b.resourceType}\0${b.resourceName}\0${b.principal}`));
}

async function createAcl(admin: Admin, binding: AclBinding): Promise<{ created: AclRow }> {
  const [result] = await admin.createAcls([binding]);
  if (result) throw result;
  return { created: row(binding) };
}

async function deleteAcl(admin: Admin, binding: AclBinding): Promise<{ deleted: number }> {
  const [removed] = await admin.deleteAcls([binding]);
  return { deleted: removed?.length ?? 0 };
}

function field(b: Record<string, unknown>, name: string, fallback?: string): string {
  const v = b[name] ?? fallback;
  if (typeof v !== 'string' || v === '') throw badRequest(`${name} is required`);
  return v;
}

/** One exact binding from {resourceType, resourceName, patternType?, principal, host?, operation, permissionType?}. */
function aclBody(body: unknown): AclBinding {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('an ACL needs a JSON object body');
  const b = body as Record<string, unknown>;
  const parsed = <E>(name: string, parse: (s: string) => E | undefined, fallback?: string): E => {
    const text = field(b, name, fallback);
    const v = parse(text);
    if (v === undefined) throw badRequest(`unknown ${name} "${text}"`);
    return v;
  };
  const principal = field(b, 'principal');
  if (!/^[^:]+:.+$/.test(principal)) throw badRequest(`principal must look like User:alice, not "${principal}"`);
  return {
    pattern: {
      resourceType: parsed<ResourceType>('resourceType', parseResourceType),
      name: field(b, 'resourceName'),
      patternType: parsed<PatternType>('patternType', parsePatternType, 'LITERAL'),
    },
    entry: {
      principal,
      host: field(b, 'host', '*'),
      operation: parsed<AclOperation>('operation', parseOperation),
      permissionType: parsed<AclPermissionType>('permissionType', parsePermissionType, 'ALLOW'),
    },
  };
}

async function listUsers(admin: Admin): Promise<{ user: string; credentials: { mechanism: string; iterations: number }[] }[]> {
  const users = await describeUserScramCredentials(admin.cluster);
  const rows = [];
  for (const [user, info] of users) {
    if (info instanceof KafkaError) continue; // a user without credentials: nothing to show
    rows.push({ user, credentials: info.map((c) => ({ mechanism: c.mechanism, iterations: c.iterations })) });
  }
  return rows.sort((a, b) => a.user.localeCompare(b.user));
}

function mechanismOf(v: unknown): ScramMechanism {
  const m = v ?? 'SCRAM-SHA-512';
  if (!SCRAM_MECHANISMS.includes(m as ScramMechanism)) throw badRequest(`mechanism must be ${SCRAM_MECHANISMS.join(' or ')}`);
  return m as ScramMechanism;
}

/** Adds or replaces a user's credential; the answer never carries the password. */
async function upsertUser(admin: Admin, body: unknown): Promise<{ user: string; mechanism: string }> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('a user needs {"user", "password", "mechanism"?, "iterations"?}');
  const b = body as Record<string, unknown>;
  const user = field(b, 'user');
  if (typeof b.password !== 'string' || b.password === '') throw badRequest('password is required');
  const mechanism = mechanismOf(b.mechanism);
  const iterations = b.iterations === undefined || b.iterations === '' ? undefined : Number(b.iterations);
  if (iterations !== undefined && !Number.isInteger(iterations)) throw badRequest('iterations must be an integer');
  const results = await alterUserScramCredentials(admin.cluster, [
    { user, mechanism, op: 'upsert', password: b.password, ...(iterations !== undefined ? { iterations } : {}) },
  ]);
  const err = results.get(user);
  if (err) throw err;
  return { user, mechanism };
}

async function deleteUser(admin: Admin, user: string, mechanism: ScramMechanism): Promise<{ deleted: string }> {
  const err = (await alterUserScramCredentials(admin.cluster, [{ user, mechanism, op: 'delete' }])).get(user);
  if (err) throw err;
  return { deleted: user };
}

async function listQuotas(admin: Admin): Promise<{ entity: { entityType: string; entityName: string | null }[]; values: Record<string, number> }[]> {
  const entries = await admin.describeClientQuotas([], false);
  return entries.map((e) => ({ entity: e.entity, values: Object.fromEntries(e.values) }));
}

/** {entity: [{entityType, entityName|null}], set: {key: number}, remove: [key]} (AlterClientQuotas). */
async function alterQuota(admin: Admin, body: unknown): Promise<{ ok: true }> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('a quota change needs {"entity", "set"?, "remove"?}');
  const b = body as Record<string, unknown>;
  if (!Array.isArray(b.entity) || b.entity.length === 0) throw badRequest('entity must list {entityType, entityName}');
  const entity = b.entity.map((c: unknown) => {
    const part = (c ?? {}) as Record<string, unknown>;
    if (typeof part.entityType !== 'string' || !QUOTA_ENTITY_TYPES.includes(part.entityType))
      throw badRequest(`entityType must be one of ${QUOTA_ENTITY_TYPES.join(', ')}`);
    const name = part.entityName ?? null;
    if (name !== null && typeof name !== 'string') throw badRequest('entityName must be a string, or null for the default');
    return { entityType: part.entityType, entityName: name === '' ? null : name };
  });
  const set = (b.set ?? {}) as Record<string, unknown>;
  const remove = b.remove ?? [];
  if (typeof set !== 'object' || Array.isArray(set)) throw badRequest('set must map quota names to numbers');
  if (!Array.isArray(remove) || remove.some((k) => typeof k !== 'string')) throw badRequest('remove must list quota names');
  const ops: { key: string; value: number | null }[] = [];
  for (const [key, v] of Object.entries(set)) {
    const value = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
    if (typeof value !== 'number' || !Number.isFinite(value)) throw badRequest(`${key} must be a number`);
    ops.push({ key, value });
  }
  for (const key of remove as string[]) ops.push({ key, value: null });
  if (ops.length === 0) throw badRequest('nothing to change: give set or remove');
  await admin.alterClientQuotas([{ entity, ops }]);
  return { ok: true };
}
