/**
 * Runs the command-line tools the way a user does, as separate processes (dist/ when it is built
 * from today's sources, else the source through tsx: test/helpers/built.ts), and collects their output.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { nodeEntry } from '../helpers/built.js';
import { REPO_ROOT } from '../helpers/repo-root.js';

const ROOT = REPO_ROOT;

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function spawnCli(tool: string, args: string[]): ChildProcessWithoutNullStreams {
  return spawn(process.execPath, [...nodeEntry(`cli/${tool}`), ...args], {
    cwd: ROOT,
    env: { ...process.env, FJORD_DEBUG: '' },
  });
}

export function runCli(tool: string, args: string[], opts: { input?: string; timeoutMs?: number } = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawnCli(tool, args);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${tool} ${args.join(' ')} did not finish within ${opts.timeoutMs ?? 30000} ms; stderr: ${stderr}`));
    }, opts.timeoutMs ?? 30000);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(opts.input ?? '');
  });
}

/** Collects a background process's stdout lines and lets a test wait for a condition on them. */
export class LineCollector {
  lines: string[] = [];
  private partial = '';
  private waiters: (() => void)[] = [];

  constructor(child: ChildProcessWithoutNullStreams) {
    child.stdout.on('data', (d: Buffer) => {
      const text = this.partial + d.toString();
      const parts = text.split('\n');
      this.partial = parts.pop()!;
      this.lines.push(...parts);
      for (const w of this.waiters.splice(0)) w();
    });
  }

  async waitFor(pred: (lines: string[]) => boolean, timeoutMs: number, what: string): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pred(this.lines)) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; got:\n${this.lines.join('\n')}`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
  }
}

/** Resolves with the exit code once the process ended. */
export function exited(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.on('close', (code) => resolve(code)));
}
