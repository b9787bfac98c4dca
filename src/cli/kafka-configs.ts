#!/usr/bin/env node
/**
 * kafka-configs.sh: describe and alter topic and broker configs (--entity-type topics|brokers,
 * --add-config k=v,k2=[a,b] / --delete-config k,k2), printed as Kafka prints them; KIP-714's
 * client-metrics subscriptions in common/client-metrics-configs.ts, groups' configs in
 * common/group-configs.ts.
 */
import { Admin, ConfigResourceType, type ConfigEntry } from '../client/index.js';
import { createProgram, parseArgs, requireOption, closeAtExit, runTool, CliError } from './common/tool.js';
import { clientOptionsFrom, loadPropertiesFile } from './common/config.js';
import { configsWithZk } from './common/configs-zk.js';
import { userScramConfigs } from './common/user-scram-configs.js';
import { clientEntityArgs, clientQuotasCommand, type ScramHook } from './common/client-quotas.js';
import { namedResourceConfigs } from './common/named-resource-configs.js';

const TOOL = 'kafka-configs.sh';
const SOURCES = [
  'UNKNOWN',
  'DYNAMIC_TOPIC_CONFIG',
  'DYNAMIC_BROKER_CONFIG',
  'DYNAMIC_DEFAULT_BROKER_CONFIG',
  'STATIC_BROKER_CONFIG',
  'DEFAULT_CONFIG',
  'DYNAMIC_BROKER_LOGGER_CONFIG',
  'CLIENT_METRICS_CONFIG',
  'GROUP_CONFIG',
];

interface Opts {
  bootstrapServer?: string;
  zookeeper?: string;
  commandConfig?: string;
  describe?: boolean;
  alter?: boolean;
  entityType?: string;
  entityName?: string;
  entityDefault?: boolean;
  topic?: string;
  broker?: string;
  brokerDefaults?: boolean;
  addConfig?: string;
  deleteConfig?: string;
  all?: boolean;
}

/** "a=1,b=[x,y]" → [[a,1],[b,x,y]]: commas inside brackets belong to the value. */
export function parseAddConfig(s: string): [string, string][] {
  const out: [string, string][] = [];
  for (const part of s.match(/[^,[\]]+(?:\[[^\]]*\])?[^,]*/g) ?? []) {
    const i = part.indexOf('=');
    if (i <= 0) throw new CliError(`--add-config expects key=value pairs, got "${part}"`);
    const value = part.slice(i + 1).trim();
    out.push([part.slice(0, i).trim(), value.startsWith('[') && value.endsWith(']') ? value.slice(1, -1) : value]);
  }
  return out;
}

function entryLine(e: ConfigEntry): string {
  const value = e.isSensitive ? null : e.value;
  const synonyms = e.synonyms.map((s) => `${SOURCES[s.source] ?? 'UNKNOWN'}:${s.name}=${e.isSensitive ? null : s.value}`).join(', ');
  return `  ${e.name}=${value} sensitive=${e.isSensitive} synonyms={${synonyms}}`;
}

async function main(argv: string[]): Promise<number> {
  const program = createProgram(TOOL, 'Add, remove or describe configs of topics and brokers.')
    .option('--bootstrap-server <server>', 'REQUIRED (or --zookeeper): the server(s) to connect to')
    .option('--command-config <file>', 'property file with configs for the admin client')
    .option('--describe', 'list configs for the given entity')
    .option('--alter', 'alter the configuration of the entity')
    .option('--entity-type <type>', 'topics, brokers, users, clients (users and clients may be combined), client-metrics or groups')
    .option('--entity-name <name>', 'topic name, broker id, client-metrics subscription or group id')
    .option('--entity-default', 'the cluster-wide default broker config')
    .option('--topic <topic>', 'same as --entity-type topics --entity-name <topic>')
    .option('--broker <id>', 'same as --entity-type brokers --entity-name <id>')
    .option('--broker-defaults', 'same as --entity-type brokers --entity-default')
    .option('--add-config <k=v,...>', 'configs to set: k1=v1,k2=[v1,v2]')
    .option('--delete-config <k,...>', 'configs to remove')
    .option('--all', 'with --describe: all configs, not only the overridden ones')
    // --- client quotas (users / clients): src/cli/common/client-quotas.ts reads these from argv in order
    .option('--user <user>', 'same as --entity-type users --entity-name <user>')
    .option('--client <client-id>', 'same as --entity-type clients --entity-name <client-id>')
    .option('--user-defaults', 'same as --entity-type users --entity-default')
    .option('--client-defaults', 'same as --entity-type clients --entity-default');
  // --- end client quotas
  const raw = parseArgs(program, argv, { allowZookeeper: true });
  if (raw === null) return 0;
  const o = raw as Opts;
  if (Boolean(o.describe) === Boolean(o.alter)) throw new CliError('exactly one of --describe or --alter must be given (see --help)');
  // --- client quotas and SCRAM credentials: users / clients entities (repeated --entity-type
  // pairs with names in order). SCRAM keys of a user go to user-scram-configs.ts, as Kafka's tool
  // alters them through AlterUserScramCredentials; a user's --describe through a broker prints
  // its quotas, then its SCRAM credentials (ZooKeeper mode prints the whole znode once).
  const quotaEntities = clientEntityArgs(argv);
  if (quotaEntities) {
    const props = loadPropertiesFile(o.commandConfig);
    const where = {
      ...(o.bootstrapServer !== undefined ? { bootstrapServer: o.bootstrapServer } : {}),
      ...(o.zookeeper !== undefined ? { zookeeper: o.zookeeper } : {}),
    };
    const scram: ScramHook = (user, adds, deletes) => userScramConfigs({ ...where, props, describe: false, user, adds, deletes });
    const code = await clientQuotasCommand(
      quotaEntities,
      {
        ...where,
        ...(o.commandConfig !== undefined ? { commandConfig: o.commandConfig } : {}),
        describe: Boolean(o.describe),
        adds: o.addConfig ? parseAddConfig(o.addConfig) : [],
        deletes: o.deleteConfig
          ? o.deleteConfig
              .split(',')
              .map((s) => s.trim())
              .filter((s) => s !== '')
          : [],
      },
      scram,
    );
    const user = quotaEntities.length === 1 && quotaEntities[0]!.type === 'users' ? quotaEntities[0]! : undefined;
    if (code === 0 && o.describe && user !== undefined && user.name !== '' && o.zookeeper === undefined) {
      return userScramConfigs({ ...where, props, describe: true, user: user.name, adds: [], deletes: [] });
    }
    return code;
  }
  // --- end client quotas and SCRAM credentials
  let type = o.entityType;
  let name = o.entityName;
  if (o.topic !== undefined) [type, name] = ['topics', o.topic];
  if (o.broker !== undefined) [type, name] = ['brokers', o.broker];
  if (o.brokerDefaults || o.entityDefault) [type, name] = ['brokers', ''];
  if (type === 'client-metrics' || type === 'groups') {
    const admin = closeAtExit(new Admin(clientOptionsFrom(loadPropertiesFile(o.commandConfig), requireOption(o.bootstrapServer, '--bootstrap-server'))));
    const deletes = (o.deleteConfig ?? '').split(',').map((s) => s.trim());
    const adds = o.addConfig ? parseAddConfig(o.addConfig) : [];
    const run = { admin, name, describe: Boolean(o.describe), all: Boolean(o.all), adds, deletes: deletes.filter((s) => s !== ''), entryLine };
    return namedResourceConfigs(type, run).finally(() => admin.close());
  }
  if (type !== 'topics' && type !== 'brokers')
    throw new CliError('--entity-type must be topics, brokers, users, clients, client-metrics or groups (see --help)');
  if (o.zookeeper !== undefined) {
    if (o.bootstrapServer !== undefined) throw new CliError('Only one of --bootstrap-server or --zookeeper must be specified');
    return configsWithZk({
      zookeeper: o.zookeeper,
      props: loadPropertiesFile(o.commandConfig),
      describe: Boolean(o.describe),
      type,
      name,
      adds: o.addConfig ? parseAddConfig(o.addConfig) : [],
      deletes: o.deleteConfig
        ? o.deleteConfig
            .split(',')
            .map((s) => s.trim())
            .filter((s) => s !== '')
        : [],
    });
  }
  const resource = type === 'topics' ? ConfigResourceType.Topic : ConfigResourceType.Broker;
  const admin = closeAtExit(new Admin(clientOptionsFrom(loadPropertiesFile(o.commandConfig), requireOption(o.bootstrapServer, '--bootstrap-server'))));
  try {
    if (o.describe) {
      const names =
        name !== undefined ? [name] : type === 'topics' ? await admin.listTopics() : (await admin.describeCluster()).brokers.map((b) => String(b.nodeId));
      for (const n of names) {
        if (type === 'topics') await admin.describeTopics([n]);
        const entries = await admin.describeConfigs(resource, n);
        const shown = o.all ? entries : entries.filter((e) => (type === 'topics' ? e.source === 1 : [2, 3].includes(e.source)));
        const what = type === 'topics' ? `topic ${n}` : n === '' ? 'the brokers default' : `broker ${n}`;
        console.log(`${o.all ? 'All' : 'Dynamic'} configs for ${what} are:`);
        for (const e of shown) console.log(entryLine(e));
      }
      return 0;
    }
    if (name === undefined) throw new CliError('--alter needs --entity-name (or --topic / --broker / --entity-default)');
    const adds = o.addConfig ? parseAddConfig(o.addConfig) : [];
    const deletes = o.deleteConfig
      ? o.deleteConfig
          .split(',')
          .map((s) => s.trim())
          .filter((s) => s !== '')
      : [];
    if (adds.length === 0 && deletes.length === 0) throw new CliError('--alter needs --add-config or --delete-config');
    if (type === 'topics') await admin.describeTopics([name]);
    await admin.alterConfigs(resource, name, [
      ...adds.map(([k, v]) => ({ name: k, op: 'set' as const, value: v })),
      ...deletes.map((k) => ({ name: k, op: 'delete' as const })),
    ]);
    console.log(
      type === 'topics'
        ? `Completed updating config for topic ${name}.`
        : name === ''
          ? 'Completed updating default config for brokers in the cluster.'
          : `Completed updating config for broker ${name}.`,
    );
    return 0;
  } finally {
    await admin.close();
  }
}

runTool(TOOL, main);
