/**
 * kafka-configs.sh --zookeeper: the ZooKeeper mode of Kafka 1.x's ConfigCommand. An alter reads
 * the entity's znode, applies the additions and deletions, writes it back and announces the change
 * under /config/changes (brokers re-read it from there); a describe prints
 * `Configs for topic 't' are k=v,...`.
 */
import { validateTopicConfigs } from '../../config/topic-configs.js';
import { validateDynamicBrokerConfigs } from '../../config/dynamic-broker-keys.js';
import { CONFIG_PATH, DEFAULT_CONFIG_ENTITY } from '../../metadata/zk/zk-paths.js';
import type { KafkaZkClient } from '../../metadata/zk/kafka-zk-client.js';
import { openZk } from './zk-admin.js';
import { CliError } from './tool.js';

export interface ZkConfigOpts {
  zookeeper: string;
  props: Map<string, string>;
  describe: boolean;
  type: 'topics' | 'brokers';
  /** undefined: every entity of the type (describe only); '' is the brokers' default. */
  name: string | undefined;
  adds: [string, string][];
  deletes: string[];
}

/** Kafka's names for an entity in messages: topic 'x', brokers '0', default brokers. */
function entityLabel(type: 'topics' | 'brokers', name: string): string {
  const typeName = type === 'topics' ? 'topic' : 'brokers';
  return name === DEFAULT_CONFIG_ENTITY ? `default ${typeName}` : `${typeName} '${name}'`;
}

export async function configsWithZk(o: ZkConfigOpts): Promise<number> {
  const name = o.name === '' ? DEFAULT_CONFIG_ENTITY : o.name;
  if (o.type === 'brokers' && name !== undefined && name !== DEFAULT_CONFIG_ENTITY && !/^\d+$/.test(name)) {
    throw new CliError(`Error parsing broker ${name}. The broker's Entity Name must be a single integer value`);
  }
  if (!o.describe && name === undefined) throw new CliError('--alter needs --entity-name (or --topic / --broker / --entity-default)');
  if (!o.describe && o.adds.length === 0 && o.deletes.length === 0) throw new CliError('--alter needs --add-config or --delete-config');
  const zk = await openZk(o.zookeeper, o.props);
  return o.describe ? describe(zk, o.type, name) : alter(zk, o, name!);
}

async function describe(zk: KafkaZkClient, type: 'topics' | 'brokers', name: string | undefined): Promise<number> {
  const names = name !== undefined ? [name] : (await zk.session.children(`${CONFIG_PATH}/${type}`).catch(() => [] as string[])).sort();
  for (const n of names) {
    const configs = Object.entries(await zk.getEntityConfigs(type, n));
    console.log(`Configs for ${entityLabel(type, n)} are ${configs.map(([k, v]) => `${k}=${v}`).join(',')}`);
  }
  return 0;
}

async function alter(zk: KafkaZkClient, o: ZkConfigOpts, name: string): Promise<number> {
  if (o.type === 'topics' && !(await zk.getTopicAssignment(name))) throw new CliError(`Topic "${name}" does not exist.`);
  const configs = await zk.getEntityConfigs(o.type, name);
  const invalid = o.deletes.filter((k) => !(k in configs));
  if (invalid.length > 0) throw new CliError(`Invalid config(s): ${invalid.join(',')}`);
  for (const [k, v] of o.adds) configs[k] = v;
  for (const k of o.deletes) delete configs[k];
  if (o.type === 'topics') validateTopicConfigs(configs);
  else validateDynamicBrokerConfigs(name === DEFAULT_CONFIG_ENTITY ? '' : name, new Map(Object.entries(configs)));
  await zk.setEntityConfigs(o.type, name, configs);
  console.log(`Completed Updating config for entity: ${entityLabel(o.type, name)}.`);
  return 0;
}
