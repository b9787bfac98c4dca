/**
 * The `--zookeeper` forms' first step: before a tool opens its ZooKeeper session, check that some
 * server of the connect string answers at all. The session would wait its connection timeout
 * (Kafka's tools: zookeeper.connection.timeout.ms, 30 s) in silence when every server refuses the
 * connection or does not resolve; this says so in a few seconds instead. Any server that accepts a
 * connection, or one that cannot be told apart from a slow one (no answer yet), ends the check
 * and the session takes over with its usual timeout.
 */
import { createConnection } from 'node:net';
import { noAnswerReason } from '../../client/index.js';
import { CliError, withWaitLongerHint } from './tool.js';

/** How long a tool retries when every ZooKeeper server refuses, unless the user set the property. */
export const ZK_UNREACHABLE_TIMEOUT_MS = 3000;
const RETRY_MS = 200;
/** A connect that neither succeeds nor fails this fast is not "nobody there": the session decides. */
const ATTEMPT_MS = 1000;

/** One TCP connect: undefined when something answered (or may yet), else why nothing did. */
function probe(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    const done = (reason: string | undefined): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(reason);
    };
    const timer = setTimeout(() => done(undefined), ATTEMPT_MS);
    socket.once('connect', () => done(undefined));
    socket.once('error', (err: NodeJS.ErrnoException) => done(noAnswerReason(err.code) ?? undefined));
  });
}

function addresses(connect: string): { host: string; port: number }[] {
  const hosts = connect.split('/')[0] ?? '';
  return hosts.split(',').map((hp) => {
    const m = /^\[?(.*?)\]?:(\d+)$/.exec(hp.trim());
    if (!m) throw new CliError(`invalid ZooKeeper address "${hp}" (expected host:port)`);
    return { host: m[1]!, port: Number(m[2]) };
  });
}

/**
 * Resolves once some server of `connect` (host:port[,host:port][/chroot]) answers; throws a
 * one-line CliError when all of them refused or did not resolve for `timeoutMs`.
 * `setting` and `flag` name how the user passes a longer wait, for the message.
 */
export async function ensureZooKeeperAnswers(connect: string, timeoutMs: number, setting: string, flag?: string): Promise<void> {
  const servers = addresses(connect);
  const started = Date.now();
  for (;;) {
    const reasons = await Promise.all(servers.map((s) => probe(s.host, s.port)));
    if (reasons.some((r) => r === undefined)) return;
    const tried = Date.now() - started;
    if (tried >= timeoutMs) {
      const why = [...new Set(reasons)].join(', ');
      const where = servers.map((s) => `${s.host}:${s.port}`).join(', ');
      const seconds = Math.max(1, Math.round(tried / 1000));
      throw new CliError(withWaitLongerHint(`no ZooKeeper answered at ${where} (${why}; tried for ${seconds} s)`, setting, flag));
    }
    await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
  }
}

/** The check's window: the property when the user set it, else a few seconds. */
export function zkUnreachableTimeoutMs(props: ReadonlyMap<string, string>, key = 'zookeeper.connection.timeout.ms'): number {
  const v = props.get(key);
  const n = v === undefined ? Number.NaN : Number(v.trim());
  return Number.isInteger(n) && n > 0 ? n : ZK_UNREACHABLE_TIMEOUT_MS;
}
