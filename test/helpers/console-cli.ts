/**
 * bin/fjord-console.sh as a user starts it, for the tests that drive it: the child, the first
 * line it prints ("Fjord console at URL (cluster ..., N brokers)"), its stderr so far, and its
 * exit. Fails if the tool exits before printing that line.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'fjord-console.sh');

export interface ConsoleCli {
  child: ChildProcess;
  /** The first line of its stdout. */
  line: string;
  stderr: () => string;
  exited: Promise<number | null>;
}

export async function startConsoleCli(args: readonly string[]): Promise<ConsoleCli> {
  const child = spawn(SCRIPT, [...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const line = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c;
      if (out.includes('\n')) resolve(out.split('\n')[0]!);
    });
    void exited.then((code) => reject(new Error(`fjord-console.sh exited with ${code}: ${stderr}`)));
  });
  return { child, line, stderr: () => stderr, exited };
}
