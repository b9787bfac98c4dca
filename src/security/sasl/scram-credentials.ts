/**
 * SCRAM credentials as DescribeUserScramCredentials and AlterUserScramCredentials (KIP-554) see
 * them, over the users' entity configs (`users/<user>`, keys SCRAM-SHA-256 / SCRAM-SHA-512 in
 * Kafka's text form). Errors and messages are Kafka's (ZkAdminManager).
 */
import { ErrorCode } from '../../protocol/errors.js';
import { entityPath, parseEntityPath, type ClientEntityConfigStore } from '../../metadata/client-entity-configs.js';
import {
  credentialFromSaltedPassword,
  formatCredential,
  parseCredential,
  scramMechanismCode,
  scramMechanismFromCode,
  SCRAM_MAX_ITERATIONS,
  SCRAM_MECHANISMS,
  SCRAM_MIN_ITERATIONS,
  type ScramMechanism,
} from './scram.js';
import { messageOf } from '../../common/errors.js';

export interface UserCredentialsDescription {
  user: string;
  errorCode: number;
  errorMessage: string | null;
  credentialInfos: { mechanism: number; iterations: number }[];
}

function infosOf(configs: Readonly<Record<string, string>>): { mechanism: number; iterations: number }[] {
  const out: { mechanism: number; iterations: number }[] = [];
  for (const m of SCRAM_MECHANISMS) {
    const text = configs[m];
    const c = text === undefined ? undefined : parseCredential(text);
    if (c !== undefined) out.push({ mechanism: scramMechanismCode(m), iterations: c.iterations });
  }
  return out;
}

/** `users` null or empty: every user that has a credential. */
export function describeUserScramCredentials(store: ClientEntityConfigStore, users: readonly string[] | null): UserCredentialsDescription[] {
  if (users === null || users.length === 0) {
    const out: UserCredentialsDescription[] = [];
    for (const [path, configs] of store.entries()) {
      const e = parseEntityPath(path);
      if (e === undefined || e.clientId !== undefined || typeof e.user !== 'string') continue;
      const credentialInfos = infosOf(configs);
      if (credentialInfos.length > 0) out.push({ user: e.user, errorCode: 0, errorMessage: null, credentialInfos });
    }
    return out.sort((a, b) => (a.user < b.user ? -1 : a.user > b.user ? 1 : 0));
  }
  const counts = new Map<string, number>();
  for (const u of users) counts.set(u, (counts.get(u) ?? 0) + 1);
  return [...counts].map(([user, n]) => {
    if (n > 1)
      return {
        user,
        errorCode: ErrorCode.DUPLICATE_RESOURCE,
        errorMessage: `Cannot describe SCRAM credentials for the same user twice in a single request: ${user}`,
        credentialInfos: [],
      };
    const credentialInfos = infosOf(store.get(entityPath({ user })));
    if (credentialInfos.length === 0)
      return {
        user,
        errorCode: ErrorCode.RESOURCE_NOT_FOUND,
        errorMessage: `Attempt to describe a user credential that does not exist: ${user}`,
        credentialInfos: [],
      };
    return { user, errorCode: 0, errorMessage: null, credentialInfos };
  });
}

export interface CredentialDeletion {
  name: string;
  mechanism: number;
}
export interface CredentialUpsertion {
  name: string;
  mechanism: number;
  iterations: number;
  salt: Buffer;
  saltedPassword: Buffer;
}
export interface AlterResult {
  user: string;
  errorCode: number;
  errorMessage: string | null;
}

/** Applies each user's changes together, or none of them when one is refused. */
export async function alterUserScramCredentials(
  store: ClientEntityConfigStore,
  deletions: readonly CredentialDeletion[],
  upsertions: readonly CredentialUpsertion[],
): Promise<AlterResult[]> {
  const errors = new Map<string, { code: number; message: string }>();
  const refuse = (user: string, code: number, message: string): void => {
    if (!errors.has(user)) errors.set(user, { code, message });
  };
  const users: string[] = [];
  for (const a of [...deletions, ...upsertions]) if (!users.includes(a.name)) users.push(a.name);

  for (const u of upsertions) {
    const m = scramMechanismFromCode(u.mechanism);
    if (u.name === '') refuse(u.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Username must not be empty');
    else if (m === undefined) refuse(u.name, ErrorCode.UNSUPPORTED_SASL_MECHANISM, 'Unknown SCRAM mechanism');
    else if (u.iterations < SCRAM_MIN_ITERATIONS) refuse(u.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Too few iterations');
    else if (u.iterations > SCRAM_MAX_ITERATIONS) refuse(u.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Too many iterations');
    else if (u.salt.length === 0 || u.saltedPassword.length === 0)
      refuse(u.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Salt and salted password must not be empty');
  }
  for (const d of deletions) {
    if (d.name === '') refuse(d.name, ErrorCode.UNACCEPTABLE_CREDENTIAL, 'Username must not be empty');
    else if (scramMechanismFromCode(d.mechanism) === undefined) refuse(d.name, ErrorCode.UNSUPPORTED_SASL_MECHANISM, 'Unknown SCRAM mechanism');
  }
  const seen = new Set<string>();
  for (const a of [...deletions, ...upsertions]) {
    const key = `${a.name}\u0000${a.mechanism}`;
    if (seen.has(key)) refuse(a.name, ErrorCode.DUPLICATE_RESOURCE, 'A user credential cannot be altered twice in the same request');
    seen.add(key);
  }
  for (const d of deletions) {
    const m = scramMechanismFromCode(d.mechanism);
    if (d.name !== '' && m !== undefined && store.get(entityPath({ user: d.name }))[m] === undefined) {
      refuse(d.name, ErrorCode.RESOURCE_NOT_FOUND, 'Attempt to delete a user credential that does not exist');
    }
  }

  const results: AlterResult[] = [];
  for (const user of users) {
    const refused = errors.get(user);
    if (refused !== undefined) {
      results.push({ user, errorCode: refused.code, errorMessage: refused.message });
      continue;
    }
    const path = entityPath({ user });
    const configs: Record<string, string> = { ...store.get(path) };
    for (const d of deletions) if (d.name === user) delete configs[scramMechanismFromCode(d.mechanism)!];
    for (const u of upsertions) {
      if (u.name !== user) continue;
      const m: ScramMechanism = scramMechanismFromCode(u.mechanism)!;
      configs[m] = formatCredential(credentialFromSaltedPassword(m, u.salt, u.saltedPassword, u.iterations));
    }
    try {
      await store.set(path, configs);
      results.push({ user, errorCode: 0, errorMessage: null });
    } catch (err) {
      results.push({ user, errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: messageOf(err) });
    }
  }
  return results;
}
