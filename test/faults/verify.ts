/**
 * What a fault scenario is judged by, read back with kcat once the cluster is whole again:
 * - lost: acknowledged records that are not in the log at the offset they were acknowledged at
 *   with their value (Kafka's promise for acks=all with min.insync.replicas >= 2);
 * - duplicated: values stored more than once (the producers are idempotent);
 * - vanished: records the read_uncommitted observer was handed that are not in the final log
 *   (a consumer must never see data above the high watermark, which could still be lost).
 */
import { run } from '../helpers/run.js';
import type { Ack, Seen } from './workload.js';

export interface Verdict {
  acknowledged: number;
  stored: number;
  lost: number;
  duplicated: number;
  vanished: number;
  /** A few examples, for the report when something is wrong. */
  examples: string[];
}

export async function readLog(bootstrap: string, topic: string): Promise<Map<string, string>> {
  const r = await run('kcat', ['-b', bootstrap, '-C', '-t', topic, '-o', 'beginning', '-e', '-q', '-f', '%p %o %s\\n'], { timeoutMs: 120_000 });
  if (r.code !== 0) throw new Error(`kcat could not read ${topic}: ${r.stderr.slice(-500)}`);
  const stored = new Map<string, string>();
  for (const l of r.stdout.split('\n')) {
    if (!l) continue;
    const [p, o, v] = l.split(' ');
    stored.set(`${p}:${o}`, v!);
  }
  return stored;
}

export function judge(acks: readonly Ack[], seen: readonly Seen[], stored: Map<string, string>): Verdict {
  const examples: string[] = [];
  const note = (s: string): void => {
    if (examples.length < 5) examples.push(s);
  };
  let lost = 0;
  for (const a of acks) {
    const v = stored.get(`${a.partition}:${a.offset}`);
    if (v !== a.value) {
      lost++;
      note(`acknowledged ${a.value} at ${a.partition}:${a.offset}, log has ${v ?? 'nothing'}`);
    }
  }
  const counts = new Map<string, number>();
  for (const v of stored.values()) counts.set(v, (counts.get(v) ?? 0) + 1);
  let duplicated = 0;
  for (const [v, n] of counts) {
    if (n > 1) {
      duplicated += n - 1;
      note(`${v} stored ${n} times`);
    }
  }
  let vanished = 0;
  for (const s of seen) {
    const v = stored.get(`${s.partition}:${s.offset}`);
    if (v !== s.value) {
      vanished++;
      note(`observer saw ${s.value} at ${s.partition}:${s.offset}, log has ${v ?? 'nothing'}`);
    }
  }
  return { acknowledged: acks.length, stored: stored.size, lost, duplicated, vanished, examples };
}
