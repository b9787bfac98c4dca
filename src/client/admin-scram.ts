/**
 * Admin calls for SCRAM credentials (KIP-554): describe users' mechanisms and iterations, add or
 * replace a credential (the salted password is computed here, as Kafka's admin client does, so the
 * password never leaves the client), delete one.
 */
import { Api } from './apis.js';
import type { Cluster } from './cluster.js';
import { KafkaError, errorName } from './errors.js';
import {
  randomSalt,
  saltedPasswordAsync,
  scramMechanismCode,
  scramMechanismFromCode,
  SCRAM_DEFAULT_ITERATIONS,
  type ScramMechanism,
} from '../security/sasl/scram.js';

export interface ScramCredentialInfo {
  mechanism: ScramMechanism;
  iterations: number;
}

/** Per user: its credentials, or the broker's error for that user. */
export async function describeUserScramCredentials(cluster: Cluster, users?: readonly string[]): Promise<Map<string, ScramCredentialInfo[] | KafkaError>> {
  const conn = await cluster.anyConnection();
  const resp = await conn.send(Api.DescribeUserScramCredentials, { users: users === undefined ? null : users.map((name) => ({ name })) });
  if (resp.errorCode !== 0) throw new KafkaError(resp.errorCode, `${errorName(resp.errorCode)}: ${resp.errorMessage ?? ''}`);
  const out = new Map<string, ScramCredentialInfo[] | KafkaError>();
  for (const r of resp.results) {
    if (r.errorCode !== 0) out.set(r.user, new KafkaError(r.errorCode, r.errorMessage ?? errorName(r.errorCode)));
    else
      out.set(
        r.user,
        r.credentialInfos.flatMap((c) => {
          const mechanism = scramMechanismFromCode(c.mechanism);
          return mechanism ? [{ mechanism, iterations: c.iterations }] : [];
        }),
      );
  }
  return out;
}

export type ScramAlteration =
  | { user: string; mechanism: ScramMechanism; op: 'upsert'; password: string; iterations?: number }
  | { user: string; mechanism: ScramMechanism; op: 'delete' };

/** Per user: null when done, or the broker's error. */
export async function alterUserScramCredentials(cluster: Cluster, alterations: readonly ScramAlteration[]): Promise<Map<string, KafkaError | null>> {
  const upsertions = [];
  for (const a of alterations) {
    if (a.op !== 'upsert') continue;
    const iterations = a.iterations ?? SCRAM_DEFAULT_ITERATIONS;
    const salt = randomSalt();
    // Bounded here only by what PBKDF2 accepts; the broker judges the iteration count.
    const saltedPassword = iterations > 0 && iterations <= 1_000_000 ? await saltedPasswordAsync(a.mechanism, a.password, salt, iterations) : Buffer.alloc(1);
    upsertions.push({ name: a.user, mechanism: scramMechanismCode(a.mechanism), iterations, salt, saltedPassword });
  }
  const deletions = alterations.filter((a) => a.op === 'delete').map((a) => ({ name: a.user, mechanism: scramMechanismCode(a.mechanism) }));
  const conn = await cluster.anyConnection();
  const resp = await conn.send(Api.AlterUserScramCredentials, { deletions, upsertions });
  return new Map(resp.results.map((r) => [r.user, r.errorCode === 0 ? null : new KafkaError(r.errorCode, r.errorMessage ?? errorName(r.errorCode))]));
}
