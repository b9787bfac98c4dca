/** Runs kcat against a test broker and collects its output (stdin piped in, exit code checked). */
import { spawn } from 'node:child_process';

export interface KcatResult {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

export function kcat(args: string[], input?: string | Buffer, timeoutMs = 60_000): Promise<KcatResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('kcat', args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`kcat ${args.join(' ')} timed out; stderr: ${err}`));
    }, timeoutMs);
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(out), stderr: err });
    });
    if (input !== undefined) child.stdin.end(input);
    else child.stdin.end();
  });
}

/** Produces lines with kcat -P; fails the test when kcat fails. */
export async function kcatProduce(bootstrap: string, topic: string, lines: string, extra: string[] = []): Promise<void> {
  const res = await kcat(['-P', '-b', bootstrap, '-t', topic, ...extra], lines);
  if (res.code !== 0) throw new Error(`kcat -P exited ${res.code}: ${res.stderr}`);
}

/** Consumes until the end of every partition with kcat -C -e. */
export async function kcatConsume(bootstrap: string, topic: string, extra: string[] = []): Promise<string> {
  const res = await kcat(['-C', '-b', bootstrap, '-t', topic, '-e', '-q', ...extra]);
  if (res.code !== 0) throw new Error(`kcat -C exited ${res.code}: ${res.stderr}`);
  return res.stdout.toString();
}
