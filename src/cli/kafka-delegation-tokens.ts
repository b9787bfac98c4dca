#!/usr/bin/env node
/**
 * kafka-delegation-tokens.sh (Kafka's DelegationTokenCommand): create, renew, expire and describe
 * delegation tokens over a SASL or SSL connection given by --command-config, printing what
 * Kafka's tool prints (the token table with TOKENID HMAC OWNER REQUESTER RENEWERS ISSUEDATE
 * EXPIRYDATE MAXDATE, dates as yyyy-MM-ddTHH:mm in local time).
 */
import { Admin } from '../client/index.js';
import {
  createDelegationToken,
  describeDelegationTokens,
  expireDelegationToken,
  renewDelegationToken,
  type DelegationTokenInfo,
} from '../client/admin-delegation-tokens.js';
import { parsePrincipal, principalToString, type KafkaPrincipal } from '../security/principal.js';
import { createProgram, parseArgs, closeAtExit, runTool, CliError, collect } from './common/tool.js';
import { clientOptionsFrom, loadPropertiesFile } from './common/config.js';

const TOOL = 'kafka-delegation-tokens.sh';

interface Options {
  bootstrapServer?: string;
  commandConfig?: string;
  create?: boolean;
  renew?: boolean;
  expire?: boolean;
  describe?: boolean;
  ownerPrincipal?: string[];
  renewerPrincipal?: string[];
  maxLifeTimePeriod?: string;
  renewTimePeriod?: string;
  expiryTimePeriod?: string;
  hmac?: string;
}

/** Kafka's flag names (without --) for the messages of CommandLineUtils. */
const FLAG: Record<keyof Options, string> = {
  bootstrapServer: 'bootstrap-server',
  commandConfig: 'command-config',
  create: 'create',
  renew: 'renew',
  expire: 'expire',
  describe: 'describe',
  ownerPrincipal: 'owner-principal',
  renewerPrincipal: 'renewer-principal',
  maxLifeTimePeriod: 'max-life-time-period',
  renewTimePeriod: 'renew-time-period',
  expiryTimePeriod: 'expiry-time-period',
  hmac: 'hmac',
};

/** DelegationTokenCommandOptions.checkArgs, in its order and words. */
function checkArgs(o: Options): void {
  const required = (...keys: (keyof Options)[]): void => {
    for (const k of keys) if (o[k] === undefined) throw new CliError(`Missing required argument "[${FLAG[k]}]"`);
  };
  const invalid = (action: keyof Options, keys: (keyof Options)[]): void => {
    if (!o[action]) return;
    for (const k of keys) if (o[k] !== undefined) throw new CliError(`Option "[${FLAG[action]}]" can't be used with option "[${FLAG[k]}]"`);
  };
  required('bootstrapServer', 'commandConfig');
  if (o.create) required('maxLifeTimePeriod');
  if (o.renew) required('hmac', 'renewTimePeriod');
  if (o.expire) required('hmac', 'expiryTimePeriod');
  invalid('create', ['hmac', 'renewTimePeriod', 'expiryTimePeriod']);
  invalid('renew', ['renewerPrincipal', 'maxLifeTimePeriod', 'expiryTimePeriod', 'ownerPrincipal']);
  invalid('expire', ['renew', 'maxLifeTimePeriod', 'renewTimePeriod', 'ownerPrincipal']);
  invalid('describe', ['renewTimePeriod', 'maxLifeTimePeriod', 'hmac', 'expiryTimePeriod']);
}

function long(o: Options, key: 'maxLifeTimePeriod' | 'renewTimePeriod' | 'expiryTimePeriod'): number {
  const text = o[key]!;
  if (!/^[+-]?\d+$/.test(text)) throw new CliError(`Cannot parse argument '${text}' of option ${FLAG[key]}`);
  return Number(text);
}

function principals(list: string[] | undefined): KafkaPrincipal[] {
  return (list ?? []).map((p) => {
    try {
      return parsePrincipal(p.trim());
    } catch {
      throw new CliError(`Invalid principal: ${p.trim()}; expected principalType:name, e.g. User:alice`);
    }
  });
}

/** Java's List.toString: [a, b]. */
const listText = (ps: readonly KafkaPrincipal[]): string => `[${ps.map(principalToString).join(', ')}]`;

/** SimpleDateFormat("yyyy-MM-dd'T'HH:mm") in the local time zone. */
function dateText(ms: number): string {
  const d = new Date(ms);
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** printToken: "%n%-15s %-30s %-15s %-15s %-25s %-15s %-15s %-15s%n" for the header and each token. */
function tokenTable(tokens: readonly DelegationTokenInfo[]): string {
  const widths = [15, 30, 15, 15, 25, 15, 15, 15];
  const row = (cells: string[]): string => `\n${cells.map((c, i) => c.padEnd(widths[i]!)).join(' ')}\n`;
  let out = row(['TOKENID', 'HMAC', 'OWNER', 'REQUESTER', 'RENEWERS', 'ISSUEDATE', 'EXPIRYDATE', 'MAXDATE']);
  for (const t of tokens) {
    out += row([
      t.tokenId,
      t.hmac.toString('base64'),
      principalToString(t.owner),
      principalToString(t.tokenRequester),
      listText(t.renewers),
      dateText(t.issueTimestamp),
      dateText(t.expiryTimestamp),
      dateText(t.maxTimestamp),
    ]);
  }
  return out;
}

function hmacBytes(text: string): Buffer {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) throw new CliError(`Illegal base64 character in --hmac ${text}`);
  return Buffer.from(text, 'base64');
}

async function main(argv: string[]): Promise<number> {
  const program = createProgram(TOOL, 'This tool helps to create, renew, expire, or describe delegation tokens.')
    .option('--bootstrap-server <server>', 'REQUIRED: server(s) to use for bootstrapping.')
    .option(
      '--command-config <file>',
      'REQUIRED: A property file containing configs to be passed to Admin Client. Token management operations are allowed in secure mode only. This config file is used to pass security related configs.',
    )
    .option('--create', 'Create a new delegation token. Use --renewer-principal option to pass renewer principals.')
    .option('--renew', 'Renew delegation token. Use --renew-time-period option to set renew time period.')
    .option('--expire', 'Expire delegation token. Use --expiry-time-period option to expire the token.')
    .option(
      '--describe',
      'Describe delegation tokens for the given principals. Use --owner-principal to pass owner/renewer principals. If --owner-principal option is not supplied, all the user-owned tokens and tokens where the user has Describe permissions will be returned.',
    )
    .option('--owner-principal <principal>', 'owner is a Kafka principal. They should be in principalType:name format.', collect)
    .option('--renewer-principal <principal>', 'renewer is a Kafka principal. They should be in principalType:name format.', collect)
    .option(
      '--max-life-time-period <ms>',
      'Max life period for the token in milliseconds. If the value is -1, then token max life time will default to the server side config value of (delegation.token.max.lifetime.ms).',
    )
    .option(
      '--renew-time-period <ms>',
      'Renew time period in milliseconds. If the value is -1, then the renew time period will default to the server side config value of (delegation.token.expiry.time.ms).',
    )
    .option('--expiry-time-period <ms>', 'Expiry time period in milliseconds. If the value is -1, then the token will get invalidated immediately.')
    .option('--hmac <hmac>', 'HMAC of the delegation token');
  const raw = parseArgs(program, argv);
  if (raw === null) return 0;
  const o = raw as Options;
  if ([o.create, o.renew, o.expire, o.describe].filter(Boolean).length !== 1) {
    throw new CliError('Command must include exactly one action: --create, --renew, --expire or --describe');
  }
  checkArgs(o);
  const admin = closeAtExit(new Admin(clientOptionsFrom(loadPropertiesFile(o.commandConfig), o.bootstrapServer)));
  const out = (s: string): boolean => process.stdout.write(s);
  try {
    if (o.create) {
      const renewers = principals(o.renewerPrincipal);
      const maxLifetimeMs = long(o, 'maxLifeTimePeriod');
      out(`Calling create token operation with renewers :${listText(renewers)} , max-life-time-period :${maxLifetimeMs}\n`);
      const owner = principals(o.ownerPrincipal)[0];
      const token = await createDelegationToken(admin.cluster, { renewers, maxLifetimeMs, ...(owner ? { owner } : {}) });
      out(`Created delegation token with tokenId : ${token.tokenId}\n`);
      out(tokenTable([token]));
    } else if (o.renew) {
      const period = long(o, 'renewTimePeriod');
      out(`Calling renew token operation with hmac :${o.hmac} , renew-time-period :${period}\n`);
      const expiry = await renewDelegationToken(admin.cluster, hmacBytes(o.hmac!), period);
      out(`Completed renew operation. New expiry date : ${dateText(expiry)}`);
    } else if (o.expire) {
      const period = long(o, 'expiryTimePeriod');
      out(`Calling expire token operation with hmac :${o.hmac} , expire-time-period :${period}\n`);
      const expiry = await expireDelegationToken(admin.cluster, hmacBytes(o.hmac!), period);
      out(`Completed expire operation. New expiry date : ${dateText(expiry)}`);
    } else {
      const owners = principals(o.ownerPrincipal);
      out(owners.length === 0 ? 'Calling describe token operation for current user.\n' : `Calling describe token operation for owners: ${listText(owners)}\n`);
      // The documented behaviour: without --owner-principal, every token the user may see.
      const tokens = await describeDelegationTokens(admin.cluster, owners.length === 0 ? undefined : owners);
      out(`Total number of tokens : ${tokens.length}`);
      out(tokenTable(tokens));
    }
    return 0;
  } finally {
    await admin.close();
  }
}

runTool(TOOL, main);
