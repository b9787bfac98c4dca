/**
 * kafka-configs.sh --entity-type users, SCRAM part: `--add-config
 * 'SCRAM-SHA-256=[iterations=8192,password=alice-secret],SCRAM-SHA-512=[password=...]'`,
 * `--delete-config SCRAM-SHA-512`, `--describe [--entity-name alice]`, printed as Kafka's
 * ConfigCommand prints them. With --bootstrap-server through DescribeUserScramCredentials /
 * AlterUserScramCredentials; with --zookeeper written to /config/users/<user> directly (the
 * credential computed here), as Kafka's ZooKeeper-mode tool does.
 */
import { Admin } from '../../client/index.js';
import { alterUserScramCredentials, describeUserScramCredentials, type ScramAlteration } from '../../client/admin-scram.js';
import { errorName } from '../../client/errors.js';
import { sanitizeEntityName, desanitizeEntityName } from '../../metadata/client-entity-configs.js';
import {
  formatCredential,
  isScramMechanism,
  makeCredential,
  SCRAM_DEFAULT_ITERATIONS,
  SCRAM_MIN_ITERATIONS,
  type ScramMechanism,
} from '../../security/sasl/scram.js';
import { clientOptionsFrom } from './config.js';
import { openZk } from './zk-admin.js';
import { CliError, closeAtExit } from './tool.js';

export interface UserScramOpts {
  bootstrapServer?: string;
  zookeeper?: string;
  props: Map<string, string>;
  describe: boolean;
  /** undefined: every user (describe only). */
  user: string | undefined;
  adds: [string, string][];
  deletes: string[];
}

/** Whether a config key is a SCRAM credential (the rest of a user's configs are quotas). */
export const isScramConfigKey = (key: string): boolean => isScramMechanism(key);

/** "iterations=8192,password=x" → its fields; the password may hold '=' but not ','. */
function parseCredentialSpec(mechanism: ScramMechanism, value: string): { password: string; iterations: number } {
  let password: string | undefined;
  let iterations = SCRAM_DEFAULT_ITERATIONS;
  for (const part of value.split(',')) {
    const eq = part.indexOf('=');
    const key = eq > 0 ? part.slice(0, eq).trim() : '';
    const v = eq > 0 ? part.slice(eq + 1) : '';
    if (key === 'password') password = v;
    else if (key === 'iterations') {
      iterations = Number(v.trim());
      if (!Number.isInteger(iterations)) throw new CliError(`Invalid iterations ${v} for ${mechanism}: not an integer`);
    } else throw new CliError(`Invalid credential property ${part} for ${mechanism}: expected iterations=<n>,password=<password>`);
  }
  if (password === undefined || password === '')
    throw new CliError(`${mechanism} needs password=<password>, e.g. ${mechanism}=[iterations=8192,password=secret]`);
  return { password, iterations };
}

function alterations(o: UserScramOpts, user: string): ScramAlteration[] {
  const out: ScramAlteration[] = [];
  for (const [k, v] of o.adds) {
    if (!isScramMechanism(k)) throw new CliError(`Invalid config ${k} for users: expected SCRAM-SHA-256 or SCRAM-SHA-512`);
    out.push({ user, mechanism: k, op: 'upsert', ...parseCredentialSpec(k, v) });
  }
  for (const k of o.deletes) {
    if (!isScramMechanism(k)) throw new CliError(`Invalid config ${k} for users: expected SCRAM-SHA-256 or SCRAM-SHA-512`);
    out.push({ user, mechanism: k, op: 'delete' });
  }
  return out;
}

export async function userScramConfigs(o: UserScramOpts): Promise<number> {
  if (!o.describe && o.user === undefined) throw new CliError('--alter needs --entity-name for --entity-type users');
  if (!o.describe && o.adds.length === 0 && o.deletes.length === 0) throw new CliError('--alter needs --add-config or --delete-config');
  return o.zookeeper !== undefined ? withZk(o, o.zookeeper) : withBroker(o);
}

async function withBroker(o: UserScramOpts): Promise<number> {
  if (o.bootstrapServer === undefined) throw new CliError('missing required argument --bootstrap-server (see --help)');
  const admin = closeAtExit(new Admin(clientOptionsFrom(o.props, o.bootstrapServer)));
  try {
    if (o.describe) {
      const described = await describeUserScramCredentials(admin.cluster, o.user === undefined ? undefined : [o.user]);
      for (const [user, infos] of described) {
        if (Array.isArray(infos)) {
          console.log(`SCRAM credential configs for user-principal '${user}' are ${infos.map((i) => `${i.mechanism}=iterations=${i.iterations}`).join(', ')}`);
        } else if (infos.code !== 91) {
          // RESOURCE_NOT_FOUND users are left out, as Kafka's admin client leaves them out of users().
          console.log(`Error retrieving SCRAM credential configs for user-principal '${user}': ExecutionException: ${errorName(infos.code)}: ${infos.message}`);
        }
      }
      return 0;
    }
    const user = o.user!;
    const results = await alterUserScramCredentials(admin.cluster, alterations(o, user));
    const err = results.get(user);
    if (err) throw new CliError(`Error while executing config command with args: ${errorName(err.code)}: ${err.message}`);
    console.log(`Completed updating config for user ${user}.`);
    return 0;
  } finally {
    await admin.close();
  }
}

async function withZk(o: UserScramOpts, connect: string): Promise<number> {
  const zk = await openZk(connect, o.props);
  if (o.describe) {
    const names = o.user !== undefined ? [sanitizeEntityName(o.user)] : (await zk.getConfigChildren('users')).sort();
    for (const n of names) {
      const configs = await zk.getEntityConfigs('users', n);
      console.log(
        `Configs for user-principal '${desanitizeEntityName(n)}' are ${Object.entries(configs)
          .map(([k, v]) => `${k}=${v}`)
          .join(',')}`,
      );
    }
    return 0;
  }
  const user = o.user!;
  const name = sanitizeEntityName(user);
  const configs = await zk.getEntityConfigs('users', name);
  const invalid = o.deletes.filter((k) => !(k in configs));
  if (invalid.length > 0) throw new CliError(`Invalid config(s): ${invalid.join(',')}`);
  for (const a of alterations(o, user)) {
    if (a.op === 'delete') {
      delete configs[a.mechanism];
      continue;
    }
    const iterations = a.iterations ?? SCRAM_DEFAULT_ITERATIONS;
    if (iterations < SCRAM_MIN_ITERATIONS) throw new CliError(`Iterations ${iterations} is less than the minimum ${SCRAM_MIN_ITERATIONS} for ${a.mechanism}`);
    configs[a.mechanism] = formatCredential(await makeCredential(a.mechanism, a.password, iterations));
  }
  await zk.setEntityConfigs('users', name, configs);
  console.log(`Completed updating config for entity: user-principal '${user}'.`);
  return 0;
}
