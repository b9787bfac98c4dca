#!/usr/bin/env node
/**
 * kafka-acls.sh, as Kafka's AclCommand: --add / --remove / --list ACLs through any broker
 * (--bootstrap-server, --command-config), or, in ZooKeeper mode, directly in ZooKeeper
 * (--authorizer-properties zookeeper.connect=host:port). Resources --topic, --group, --cluster,
 * --transactional-id, --delegation-token, --user-principal; --resource-pattern-type; principals
 * and hosts; --operation (repeatable); the --producer / --consumer / --idempotent conveniences;
 * output in AclCommand's words.
 */
import { createInterface } from 'node:readline';
import { Admin, KafkaError } from '../client/index.js';
import { createProgram, parseArgs, collect, closeAtExit, runTool, CliError } from './common/tool.js';
import { clientOptionsFrom, loadPropertiesFile, parseKeyValues } from './common/config.js';
import {
  AclOperation as Op,
  AclPermissionType as Perm,
  PatternType,
  ResourceType as RT,
  CLUSTER_NAME,
  formatEntry,
  formatPattern,
  operationName,
  parseOperation,
  parsePatternType,
  patternTypeName,
  resourceTypeName,
  type AccessControlEntry,
  type AclBinding,
  type AclBindingFilter,
  type ResourcePatternFilter,
} from '../security/authorizer/acl-model.js';
import { parsePrincipal } from '../security/principal.js';

const TOOL = 'kafka-acls.sh';

interface Opts {
  bootstrapServer?: string;
  commandConfig?: string;
  authorizerProperties?: string[];
  authorizer?: string;
  add?: boolean;
  remove?: boolean;
  list?: boolean;
  allowPrincipal?: string[];
  denyPrincipal?: string[];
  allowHost?: string[];
  denyHost?: string[];
  operation?: string[];
  topic?: string[];
  group?: string[];
  cluster?: boolean;
  transactionalId?: string[];
  delegationToken?: string[];
  userPrincipal?: string[];
  resourcePatternType?: string;
  producer?: boolean;
  consumer?: boolean;
  idempotent?: boolean;
  principal?: string[];
  force?: boolean;
}

/** AclCommand's operations per resource type (others are refused). */
const VALID_OPS: Readonly<Record<number, readonly Op[]>> = {
  [RT.TOPIC]: [Op.READ, Op.WRITE, Op.CREATE, Op.DESCRIBE, Op.DELETE, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS, Op.ALTER, Op.ALL],
  [RT.GROUP]: [Op.READ, Op.DESCRIBE, Op.DELETE, Op.ALL],
  [RT.CLUSTER]: [Op.CREATE, Op.CLUSTER_ACTION, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS, Op.IDEMPOTENT_WRITE, Op.ALTER, Op.DESCRIBE, Op.ALL],
  [RT.TRANSACTIONAL_ID]: [Op.DESCRIBE, Op.WRITE, Op.ALL],
  [RT.DELEGATION_TOKEN]: [Op.DESCRIBE, Op.ALL],
  [RT.USER]: [Op.CREATE_TOKENS, Op.DESCRIBE_TOKENS, Op.ALL],
};

const pascalOp = (o: Op): string =>
  operationName(o)
    .toLowerCase()
    .split('_')
    .map((w) => w[0]!.toUpperCase() + w.slice(1))
    .join('');

/** Where the ACLs go: a broker's admin API, or ZooKeeper directly. */
interface AclBackend {
  create(bindings: AclBinding[]): Promise<(Error | null)[]>;
  describe(filter: AclBindingFilter): Promise<AclBinding[]>;
  remove(filters: AclBindingFilter[]): Promise<void>;
}

function resourceFilters(o: Opts, patternType: PatternType): ResourcePatternFilter[] {
  const out: ResourcePatternFilter[] = [];
  for (const t of o.topic ?? []) out.push({ resourceType: RT.TOPIC, name: t, patternType });
  for (const g of o.group ?? []) out.push({ resourceType: RT.GROUP, name: g, patternType });
  if (o.cluster) out.push({ resourceType: RT.CLUSTER, name: CLUSTER_NAME, patternType });
  for (const t of o.transactionalId ?? []) out.push({ resourceType: RT.TRANSACTIONAL_ID, name: t, patternType });
  for (const t of o.delegationToken ?? []) out.push({ resourceType: RT.DELEGATION_TOKEN, name: t, patternType });
  for (const u of o.userPrincipal ?? []) out.push({ resourceType: RT.USER, name: u, patternType });
  return out;
}

function checkPrincipals(list: readonly string[]): void {
  for (const p of list) {
    try {
      parsePrincipal(p);
    } catch {
      throw new CliError(`Could not parse principal from \`${p}\` Principal must be of the form Type:name, e.g. User:alice`);
    }
  }
}

function entriesFor(principals: readonly string[], hosts: readonly string[] | undefined, ops: readonly Op[], permissionType: Perm): AccessControlEntry[] {
  const hs = hosts && hosts.length > 0 ? hosts : principals.length > 0 ? ['*'] : [];
  const out: AccessControlEntry[] = [];
  for (const principal of principals) for (const host of hs) for (const operation of ops) out.push({ principal, host, operation, permissionType });
  return out;
}

/** Resource → the entries to add or remove (AclCommand's getResourceToAcls, with the conveniences). */
function resourceToAcls(o: Opts, patternType: PatternType): Map<ResourcePatternFilter, AccessControlEntry[]> {
  const allowP = o.allowPrincipal ?? [];
  const denyP = o.denyPrincipal ?? [];
  checkPrincipals([...allowP, ...denyP]);
  if ((o.allowHost?.length ?? 0) > 0 && allowP.length === 0) throw new CliError('--allow-host can only be used with --allow-principal');
  if ((o.denyHost?.length ?? 0) > 0 && denyP.length === 0) throw new CliError('--deny-host can only be used with --deny-principal');
  const out = new Map<ResourcePatternFilter, AccessControlEntry[]>();
  const add = (r: ResourcePatternFilter, ops: readonly Op[]): void => {
    const entries = [...entriesFor(allowP, o.allowHost, ops, Perm.ALLOW), ...entriesFor(denyP, o.denyHost, ops, Perm.DENY)];
    const key = [...out.keys()].find((k) => k.resourceType === r.resourceType && k.name === r.name) ?? r;
    out.set(key, [...(out.get(key) ?? []), ...entries]);
  };
  if (o.producer || o.consumer) {
    if (o.producer && !o.topic?.length) throw new CliError('With --producer you must specify a --topic');
    if (o.consumer && (!o.topic?.length || !o.group?.length))
      throw new CliError('With --consumer you must specify a --topic and a --group and no --transactional-id or --idempotent');
    for (const t of o.topic ?? []) {
      const ops = [...(o.producer ? [Op.WRITE, Op.DESCRIBE, Op.CREATE] : []), ...(o.consumer ? [Op.READ, Op.DESCRIBE] : [])];
      add({ resourceType: RT.TOPIC, name: t, patternType }, [...new Set(ops)]);
    }
    if (o.consumer) for (const g of o.group ?? []) add({ resourceType: RT.GROUP, name: g, patternType }, [Op.READ]);
    if (o.producer) {
      for (const t of o.transactionalId ?? []) add({ resourceType: RT.TRANSACTIONAL_ID, name: t, patternType }, [Op.WRITE, Op.DESCRIBE]);
      if (o.idempotent) add({ resourceType: RT.CLUSTER, name: CLUSTER_NAME, patternType: PatternType.LITERAL }, [Op.IDEMPOTENT_WRITE]);
    }
    return out;
  }
  const ops = (o.operation ?? ['All']).map((s) => {
    const op = parseOperation(s);
    if (op === undefined || op === Op.ANY || op === Op.UNKNOWN) throw new CliError(`Invalid operation ${s}`);
    return op;
  });
  const resources = resourceFilters(o, patternType);
  if (resources.length === 0)
    throw new CliError(
      'You must provide at least one resource: --topic <topic> or --cluster or --group <group> or --transactional-id <id> or --delegation-token <token> or --user-principal <principal>',
    );
  for (const r of resources) {
    const valid = VALID_OPS[r.resourceType] ?? [];
    const bad = ops.filter((op) => !valid.includes(op));
    if (bad.length > 0) throw new CliError(`ResourceType ${resourceTypeName(r.resourceType)} only supports operations ${valid.map(pascalOp).join(', ')}`);
    add(r, ops);
  }
  return out;
}

const filterText = (r: ResourcePatternFilter): string =>
  `ResourcePatternFilter(resourceType=${resourceTypeName(r.resourceType)}, name=${r.name ?? null}, patternType=${patternTypeName(r.patternType)})`;

function aclBlock(entries: readonly AccessControlEntry[]): string {
  return ` \n ${entries.map((e) => `\t${formatEntry(e)}`).join('\n')} \n`;
}

/** AclCommand's printResourceAcls: one block per resource pattern. */
function printResourceAcls(bindings: readonly AclBinding[]): void {
  const byPattern = new Map<string, AclBinding[]>();
  for (const b of bindings) {
    const key = formatPattern(b.pattern);
    byPattern.set(key, [...(byPattern.get(key) ?? []), b]);
  }
  for (const [pattern, list] of byPattern) {
    console.log(`Current ACLs for resource \`${pattern}\`:${aclBlock(list.map((b) => b.entry))}`);
  }
}

async function confirm(o: Opts, question: string): Promise<boolean> {
  if (o.force) return true;
  console.log(question);
  const rl = createInterface({ input: process.stdin });
  const answer = await new Promise<string>((resolve) => {
    rl.once('line', resolve);
    rl.once('close', () => resolve(''));
  });
  rl.close();
  return answer.trim().toLowerCase() === 'y';
}

const anyEntry = { principal: null, host: null, operation: Op.ANY, permissionType: Perm.ANY };

async function listFor(backend: AclBackend, filters: readonly ResourcePatternFilter[], principal?: string): Promise<AclBinding[]> {
  const entry = { ...anyEntry, principal: principal ?? null };
  const fs: ResourcePatternFilter[] = filters.length > 0 ? [...filters] : [{ resourceType: RT.ANY, name: null, patternType: PatternType.ANY }];
  const out: AclBinding[] = [];
  for (const pattern of fs) out.push(...(await backend.describe({ pattern, entry })));
  return out;
}

async function zkBackend(props: Map<string, string>): Promise<AclBackend> {
  const connect = props.get('zookeeper.connect');
  if (!connect) throw new CliError('--authorizer-properties must include zookeeper.connect=host:port');
  const { ZkSession } = await import('../metadata/zk/zk-session.js');
  const { ZkAcls } = await import('../metadata/zk/zk-acls.js');
  const { Authorizer } = await import('../security/authorizer/authorizer.js');
  if (!/^[^/,\s]+:\d+(,[^/,\s]+:\d+)*(\/[^\s]*)?$/.test(connect))
    throw new CliError(`zookeeper.connect expects host:port[,host:port...][/chroot], got "${connect}"`);
  const timeout = Number(props.get('zookeeper.connection.timeout.ms') ?? 30_000);
  const { ensureZooKeeperAnswers, zkUnreachableTimeoutMs } = await import('./common/zk-reachable.js');
  await ensureZooKeeperAnswers(connect, zkUnreachableTimeoutMs(props), 'zookeeper.connection.timeout.ms', '--authorizer-properties');
  const session = await ZkSession.open({
    connect,
    sessionTimeoutMs: Number(props.get('zookeeper.session.timeout.ms') ?? 30_000),
    connectionTimeoutMs: timeout,
  });
  closeAtExit(session);
  const authorizer = await Authorizer.open({ storage: new ZkAcls(session), superUsers: [], allowEveryoneIfNoAclFound: false, follow: false });
  return {
    async create(bindings) {
      return (await authorizer.create(bindings)).map((e) => e ?? null);
    },
    async describe(filter) {
      return authorizer.describe(filter);
    },
    async remove(filters) {
      for (const r of await authorizer.delete(filters)) if (r.error) throw r.error;
    },
  };
}

function adminBackend(o: Opts): AclBackend {
  if (!o.bootstrapServer) throw new CliError('Only one of --bootstrap-server or --authorizer-properties must be specified (see --help)');
  const admin = closeAtExit(new Admin(clientOptionsFrom(loadPropertiesFile(o.commandConfig), o.bootstrapServer)));
  return {
    create: (bindings) => admin.createAcls(bindings),
    describe: (filter) => admin.describeAcls(filter),
    async remove(filters) {
      await admin.deleteAcls(filters);
    },
  };
}

async function main(argv: string[]): Promise<number> {
  const program = createProgram(TOOL, 'Add, remove or list ACLs.')
    .option('--bootstrap-server <server>', 'REQUIRED (or --authorizer-properties): the server(s) to connect to')
    .option('--command-config <file>', 'property file with configs for the admin client')
    .option('--authorizer-properties <k=v>', 'ZooKeeper mode: zookeeper.connect=host:port[/chroot] writes ACLs directly to ZooKeeper', collect)
    .option('--authorizer <class>', "accepted for compatibility (Kafka's AclAuthorizer is the only one)")
    .option('--add', 'add ACLs')
    .option('--remove', 'remove ACLs')
    .option('--list', 'list ACLs')
    .option('--allow-principal <principal>', 'principal (Type:name) the ALLOW ACLs are for; repeatable; User:* = everyone', collect)
    .option('--deny-principal <principal>', 'principal the DENY ACLs are for; repeatable', collect)
    .option('--allow-host <host>', 'host the ALLOW ACLs apply to (default *); repeatable', collect)
    .option('--deny-host <host>', 'host the DENY ACLs apply to (default *); repeatable', collect)
    .option(
      '--operation <op>',
      'Read, Write, Create, Delete, Alter, Describe, ClusterAction, DescribeConfigs, AlterConfigs, IdempotentWrite, CreateTokens, DescribeTokens, All (default All); repeatable',
      collect,
    )
    .option('--topic <topic>', 'topic resource; repeatable; * = every topic', collect)
    .option('--group <group>', 'consumer group resource; repeatable', collect)
    .option('--cluster', 'the cluster resource')
    .option('--transactional-id <id>', 'transactional id resource; repeatable', collect)
    .option('--delegation-token <token>', 'delegation token resource; repeatable', collect)
    .option('--user-principal <principal>', 'user resource (for token ACLs); repeatable', collect)
    .option('--resource-pattern-type <type>', 'literal or prefixed (add); literal, prefixed, any or match (list/remove)', 'literal')
    .option('--producer', 'convenience: WRITE, DESCRIBE, CREATE on --topic (and WRITE, DESCRIBE on --transactional-id)')
    .option('--consumer', 'convenience: READ, DESCRIBE on --topic and READ on --group')
    .option('--idempotent', 'with --producer: IDEMPOTENT_WRITE on the cluster')
    .option('--principal <principal>', "with --list: only this principal's ACLs; repeatable", collect)
    .option('--force', 'assume yes to every question');
  const raw = parseArgs(program, argv);
  if (raw === null) return 0;
  const o = raw as Opts;
  const actions = [o.add, o.remove, o.list].filter(Boolean).length;
  if (actions !== 1) throw new CliError('Command must include exactly one action: --list, --add, --remove. (see --help)');
  if (o.bootstrapServer !== undefined && o.authorizerProperties !== undefined)
    throw new CliError('Only one of --bootstrap-server or --authorizer-properties must be specified');
  if (o.idempotent && !o.producer) throw new CliError('--idempotent can only be used with --producer');
  const patternType = parsePatternType(o.resourcePatternType ?? 'literal');
  if (patternType === undefined || patternType === PatternType.UNKNOWN)
    throw new CliError(`Invalid --resource-pattern-type ${o.resourcePatternType}: literal, prefixed, any or match`);
  if (o.add && patternType !== PatternType.LITERAL && patternType !== PatternType.PREFIXED) {
    throw new CliError(`A '--resource-pattern-type' value of '${patternTypeName(patternType)}' is not valid when adding acls.`);
  }
  const backend = o.authorizerProperties !== undefined ? await zkBackend(parseKeyValues(o.authorizerProperties, '--authorizer-properties')) : adminBackend(o);

  if (o.list) {
    const filters = resourceFilters(o, patternType);
    const principals = o.principal ?? [];
    checkPrincipals(principals);
    if (principals.length === 0) printResourceAcls(await listFor(backend, filters));
    for (const p of principals) {
      console.log(`ACLs for principal \`${p}\``);
      printResourceAcls(await listFor(backend, filters, p));
    }
    return 0;
  }

  const toChange = resourceToAcls(o, patternType);
  if (o.add) {
    for (const [r, entries] of toChange) {
      if (entries.length === 0) throw new CliError('You must specify one of: --allow-principal, --deny-principal when trying to add ACLs.');
      const pattern = { resourceType: r.resourceType, name: r.name!, patternType: r.patternType };
      console.log(`Adding ACLs for resource \`${formatPattern(pattern)}\`:${aclBlock(entries)}`);
      const errors = await backend.create(entries.map((entry) => ({ pattern, entry })));
      const failed = errors.find((e) => e !== null);
      if (failed) throw failed instanceof KafkaError ? failed : new CliError(failed.message);
    }
    printResourceAcls(await listFor(backend, [...toChange.keys()]));
    return 0;
  }

  // --remove
  for (const [r, entries] of toChange) {
    if (entries.length === 0) {
      if (await confirm(o, `Are you sure you want to delete all ACLs for resource filter \`${filterText(r)}\`? (y/n)`)) {
        await backend.remove([{ pattern: r, entry: anyEntry }]);
      }
    } else if (await confirm(o, `Are you sure you want to remove ACLs:${aclBlock(entries)} from resource filter \`${filterText(r)}\`? (y/n)`)) {
      await backend.remove(entries.map((e) => ({ pattern: r, entry: e })));
    }
  }
  printResourceAcls(await listFor(backend, [...toChange.keys()]));
  return 0;
}

runTool(TOOL, main);
