/**
 * kafka-configs.sh for client quota entities (`--entity-type users|clients`), as Kafka 3.9's
 * ConfigCommand: `--entity-name` / `--entity-default` pair with the `--entity-type`s in the order
 * given (`--entity-type users --entity-name alice --entity-type clients --entity-name app` is the
 * user's client id); `--user`, `--client`, `--user-defaults`, `--client-defaults` are shorthands.
 * With --bootstrap-server it uses DescribeClientQuotas / AlterClientQuotas; with --zookeeper it
 * reads and writes `/config/users/...` and `/config/clients/...` and announces the change on
 * /config/changes, as Kafka's ZooKeeper-mode tool did. SCRAM credential keys are not quotas:
 * they go to the `scram` hook when kafka-configs.ts provides one.
 */
import { Admin, type QuotaFilterComponent } from '../../client/index.js';
import { entityPath, sanitizeEntityName, DEFAULT_ENTITY_NAME } from '../../metadata/client-entity-configs.js';
import { isQuotaConfig, javaDoubleString, validateQuotaText, QuotaConfigError } from '../../config/quota-configs.js';
import { clientOptionsFrom, loadPropertiesFile } from './config.js';
import { closeAtExit, CliError } from './tool.js';
import { openZk } from './zk-admin.js';

export type QuotaEntityType = 'users' | 'clients';

/** One --entity-type with its name: undefined = no name given, '' = --entity-default. */
export interface QuotaEntityArg {
  type: QuotaEntityType;
  name: string | undefined;
}

export interface ClientQuotaOpts {
  bootstrapServer?: string;
  zookeeper?: string;
  commandConfig?: string;
  describe: boolean;
  adds: [string, string][];
  deletes: string[];
}

/** kafka-configs.ts's SCRAM part (the SASL work), called for SCRAM keys of one named user. */
export type ScramHook = (user: string, adds: [string, string][], deletes: string[], o: ClientQuotaOpts) => Promise<number>;

const isScram = (key: string): boolean => key === 'SCRAM-SHA-256' || key === 'SCRAM-SHA-512';

function optionValue(argv: string[], i: number, flag: string): [string, number] {
  const token = argv[i]!;
  if (token.startsWith(`${flag}=`)) return [token.slice(flag.length + 1), i];
  const v = argv[i + 1];
  if (v === undefined) throw new CliError(`option '${flag} <value>' argument missing`);
  return [v, i + 1];
}

/**
 * The users/clients entities named on the command line, in order; undefined when no entity type
 * is users or clients (topics and brokers are kafka-configs.ts's own).
 */
export function clientEntityArgs(argv: string[]): QuotaEntityArg[] | undefined {
  const types: string[] = [];
  const names: string[] = [];
  const shorthand: QuotaEntityArg[] = [];
  for (let i = 0; i < argv.length; i++) {
    const t = argv[i]!;
    const is = (flag: string): boolean => t === flag || t.startsWith(`${flag}=`);
    if (is('--entity-type')) {
      const [v, j] = optionValue(argv, i, '--entity-type');
      types.push(v);
      i = j;
    } else if (is('--entity-name')) {
      const [v, j] = optionValue(argv, i, '--entity-name');
      names.push(v);
      i = j;
    } else if (t === '--entity-default') names.push('');
    else if (is('--user') || is('--client')) {
      const flag = is('--user') ? '--user' : '--client';
      const [v, j] = optionValue(argv, i, flag);
      shorthand.push({ type: flag === '--user' ? 'users' : 'clients', name: v });
      i = j;
    } else if (t === '--user-defaults') shorthand.push({ type: 'users', name: '' });
    else if (t === '--client-defaults') shorthand.push({ type: 'clients', name: '' });
  }
  const quotaTypes = types.filter((x) => x === 'users' || x === 'clients');
  if (quotaTypes.length === 0 && shorthand.length === 0) return undefined;
  if (quotaTypes.length !== types.length) throw new CliError(`Only 'users' and 'clients' entity types can be combined, got ${types.join(', ')}`);
  if (names.length > types.length) throw new CliError('--entity-name or --entity-default given more often than --entity-type');
  const out: QuotaEntityArg[] = quotaTypes.map((type, i) => ({ type: type as QuotaEntityType, name: names[i] }));
  out.push(...shorthand);
  // Kafka orders a user's client id after the user, however the flags were ordered.
  out.sort((a, b) => (a.type === b.type ? 0 : a.type === 'users' ? -1 : 1));
  if (new Set(out.map((e) => e.type)).size !== out.length) throw new CliError(`Duplicate entity type(s) specified: ${out.map((e) => e.type).join(', ')}`);
  return out;
}

/** Kafka's description of an entity in describe output: user-principal 'alice', the default client-id. */
function describedEntity(parts: { type: QuotaEntityType; name: string | null }[]): string {
  return parts
    .map((p) => {
      const typeStr = p.type === 'users' ? 'user-principal' : 'client-id';
      return p.name === null ? `the default ${typeStr}` : `${typeStr} '${p.name}'`;
    })
    .join(', ');
}

/** Kafka 2.x ZooKeeper-mode entity label: user-principal 'alice', default client-id. */
function zkEntityLabel(parts: QuotaEntityArg[]): string {
  return parts
    .map((p) => {
      const typeStr = p.type === 'users' ? 'user-principal' : 'client-id';
      return p.name === '' || p.name === DEFAULT_ENTITY_NAME ? `default ${typeStr}` : `${typeStr} '${p.name}'`;
    })
    .join(', ');
}

export async function clientQuotasCommand(entities: QuotaEntityArg[], o: ClientQuotaOpts, scram?: ScramHook): Promise<number> {
  if (!o.describe) {
    if (entities.some((e) => e.name === undefined)) {
      throw new CliError(`--entity-name or --entity-default must be specified with --alter of ${entities.map((e) => e.type).join(', ')}`);
    }
    if (o.adds.length === 0 && o.deletes.length === 0) throw new CliError('--alter needs --add-config or --delete-config');
  }
  const keys = [...o.adds.map(([k]) => k), ...o.deletes];
  const scramKeys = keys.filter(isScram);
  const unknown = keys.filter((k) => !isScram(k) && !isQuotaConfig(k));
  if (!o.describe) {
    const onlyClient = entities.some((e) => e.type === 'clients');
    if (onlyClient && (unknown.length > 0 || scramKeys.length > 0)) {
      throw new CliError(
        `Only quota configs can be added for 'clients' using --bootstrap-server. Unexpected config names: ${[...unknown, ...scramKeys].join(',')}`,
      );
    }
    if (unknown.length > 0)
      throw new CliError(
        `Only quota and SCRAM credential configs can be added for 'users' using --bootstrap-server. Unexpected config names: ${unknown.join(',')}`,
      );
    if (scramKeys.length > 0) {
      if (entities[0]!.name === '')
        throw new CliError('The use of --entity-default or --user-defaults is not allowed with User SCRAM Credentials using --bootstrap-server.');
      if (scramKeys.length !== keys.length)
        throw new CliError("Cannot alter both quota and SCRAM credential configs simultaneously for 'users' using --bootstrap-server.");
      if (!scram) throw new CliError('SCRAM credentials cannot be managed by this kafka-configs.sh');
      return scram(entities[0]!.name!, o.adds, o.deletes, o);
    }
    for (const [k, v] of o.adds) {
      if (Number.isNaN(Number(v)) || v.trim() === '') throw new CliError(`Cannot parse quota configuration value for ${k}: ${v}`);
    }
  }
  if (o.zookeeper !== undefined) {
    if (o.bootstrapServer !== undefined) throw new CliError('Only one of --bootstrap-server or --zookeeper must be specified');
    return o.describe ? describeZk(entities, o) : alterZk(entities, o);
  }
  if (o.bootstrapServer === undefined || o.bootstrapServer === '') throw new CliError('missing required argument --bootstrap-server (see --help)');
  const admin = closeAtExit(new Admin(clientOptionsFrom(loadPropertiesFile(o.commandConfig), o.bootstrapServer)));
  try {
    const components: QuotaFilterComponent[] = entities.map((e) => ({
      entityType: e.type === 'users' ? 'user' : 'client-id',
      matchType: e.name === undefined ? 2 : e.name === '' ? 1 : 0,
      match: e.name === undefined || e.name === '' ? null : e.name,
    }));
    if (o.describe) {
      for (const entry of await admin.describeClientQuotas(components, true)) {
        const parts = [...entry.entity]
          .sort((a, b) => (a.entityType === b.entityType ? 0 : a.entityType === 'user' ? -1 : 1))
          .map((p) => ({ type: (p.entityType === 'user' ? 'users' : 'clients') as QuotaEntityType, name: p.entityName }));
        const values = [...entry.values].map(([k, v]) => `${k}=${javaDoubleString(v)}`).join(', ');
        console.log(`Quota configs for ${describedEntity(parts)} are ${values}`);
      }
      return 0;
    }
    const current = (await admin.describeClientQuotas(components, true))[0]?.values ?? new Map<string, number>();
    const invalid = o.deletes.filter((k) => !current.has(k));
    if (invalid.length > 0) throw new CliError(`Invalid config(s): ${invalid.join(',')}`);
    await admin.alterClientQuotas([
      {
        entity: entities.map((e) => ({ entityType: e.type === 'users' ? 'user' : 'client-id', entityName: e.name === '' ? null : e.name! })),
        ops: [...o.adds.map(([key, v]) => ({ key, value: Number(v) })), ...o.deletes.map((key) => ({ key, value: null }))],
      },
    ]);
    const head = entities[0]!;
    console.log(
      head.name !== ''
        ? `Completed updating config for ${head.type.slice(0, -1)} ${head.name}.`
        : `Completed updating default config for ${head.type} in the cluster.`,
    );
    return 0;
  } finally {
    await admin.close();
  }
}

/** The znode name below /config/<users|clients>/ of an entity (sanitized, <default> for the default). */
function zkName(entities: QuotaEntityArg[]): { type: QuotaEntityType; name: string } {
  const path = entityPath({
    ...(entities.find((e) => e.type === 'users') ? { user: entities.find((e) => e.type === 'users')!.name || null } : {}),
    ...(entities.find((e) => e.type === 'clients') ? { clientId: entities.find((e) => e.type === 'clients')!.name || null } : {}),
  });
  const [type, ...rest] = path.split('/');
  return { type: type as QuotaEntityType, name: rest.join('/') };
}

async function describeZk(entities: QuotaEntityArg[], o: ClientQuotaOpts): Promise<number> {
  const zk = await openZk(o.zookeeper!, loadPropertiesFile(o.commandConfig));
  // Unnamed types list the entities that exist: all users (or clients), or a user's client ids.
  let targets: QuotaEntityArg[][] = [entities];
  const unnamed = entities.findIndex((e) => e.name === undefined);
  if (unnamed >= 0) {
    const prefix = entities.slice(0, unnamed);
    const parent =
      prefix.length === 0 ? entities[unnamed]!.type : `users/${prefix[0]!.name === '' ? DEFAULT_ENTITY_NAME : sanitizeEntityName(prefix[0]!.name!)}/clients`;
    const children = (await zk.getConfigChildren(parent)).sort();
    targets = children.map((child) => [...prefix, { type: entities[unnamed]!.type, name: child === DEFAULT_ENTITY_NAME ? '' : decodeURIComponent(child) }]);
  }
  for (const t of targets) {
    const { type, name } = zkName(t);
    const configs = Object.entries(await zk.getEntityConfigs(type, name));
    console.log(`Configs for ${zkEntityLabel(t)} are ${configs.map(([k, v]) => `${k}=${v}`).join(',')}`);
  }
  return 0;
}

async function alterZk(entities: QuotaEntityArg[], o: ClientQuotaOpts): Promise<number> {
  try {
    for (const [k, v] of o.adds) validateQuotaText(k, v);
  } catch (err) {
    if (err instanceof QuotaConfigError) throw new CliError(err.message);
    throw err;
  }
  const zk = await openZk(o.zookeeper!, loadPropertiesFile(o.commandConfig));
  const { type, name } = zkName(entities);
  const configs = await zk.getEntityConfigs(type, name);
  const invalid = o.deletes.filter((k) => !(k in configs));
  if (invalid.length > 0) throw new CliError(`Invalid config(s): ${invalid.join(',')}`);
  for (const [k, v] of o.adds) configs[k] = v.trim();
  for (const k of o.deletes) delete configs[k];
  await zk.setEntityConfigs(type, name, configs);
  console.log(`Completed Updating config for entity: ${zkEntityLabel(entities)}.`);
  return 0;
}
