/**
 * The installable package, as a user installs it: `npm pack` (prepack builds dist/ when src/
 * changed), then `npm install -g --prefix TMP ./fjord-*.tgz` from npm's cache, then, from another
 * directory with TMP/bin on PATH, `fjord` and Kafka's tools: --version and --help, a broker from
 * `fjord start` with the packaged config (its data under the current directory, not the install
 * prefix), a topic created, records produced and consumed by the packaged console tools, and the
 * broker stopped by `kafka-server-stop.sh DIR`.
 *
 * The install runs with --ignore-scripts and takes zstd-napi's compiled binding from this
 * checkout: its install script downloads a prebuilt binary from outside the npm registry or, where
 * that cannot be reached (as here), compiles zstd for 30-70 s. Every other part of the install is
 * the package's own.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run, type RunResult } from '../helpers/run.js';
import { exited, LineCollector } from '../cli/helpers.js';
import { REPO_ROOT } from '../helpers/repo-root.js';

const ROOT = REPO_ROOT;

interface PackFile {
  path: string;
}

test('npm pack, npm install -g --prefix TMP, then fjord and the kafka-*.sh tools on PATH run a broker from another directory', async (t) => {
  const base = await mkdtemp(join(tmpdir(), 'fjord-packaging-'));
  const prefix = join(base, 'prefix');
  const work = join(base, 'work');
  await mkdir(work);
  // npm's own variables from an outer `npm test` (its prefix, its log level) stay out of these runs.
  const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('npm_')));
  env.PATH = `${join(prefix, 'bin')}:${process.env.PATH ?? ''}`;
  const inDir = (dir: string, cmd: string, args: string[], input?: string): Promise<RunResult> => {
    const quoted = [cmd, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    return run('sh', ['-c', `cd '${dir}' && exec ${quoted}`], { env, timeoutMs: 120_000, input });
  };
  let broker: ReturnType<typeof spawn> | undefined;
  try {
    const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string; bin: Record<string, string> };
    let started = Date.now();
    const packed = await inDir(ROOT, 'npm', ['pack', '--json', '--pack-destination', base]);
    assert.equal(packed.code, 0, packed.stderr);
    const packMs = Date.now() - started;
    const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as { filename: string; files: PackFile[] }[];
    const files = info!.files.map((f) => f.path);
    for (const wanted of [
      'package.json',
      'README.md',
      'bin/fjord',
      'bin/kafka-server-start.sh',
      'config/server.properties',
      'dist/server/main.js',
      'dist/cli/kafka-topics.js',
    ]) {
      assert.ok(files.includes(wanted), `the tarball has ${wanted}`);
    }
    const strays = files.filter((f) => /^(src|test|bench|tools|scripts|docs|examples)\//.test(f) || f.endsWith('.map') || f.includes('.build-stamp'));
    assert.deepEqual(strays, [], 'the tarball has only what running needs');

    started = Date.now();
    const tarball = join(base, info!.filename);
    const installed = await inDir(work, 'npm', [
      'install',
      '-g',
      '--prefix',
      prefix,
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
      tarball,
    ]);
    assert.equal(installed.code, 0, installed.stderr);
    const installMs = Date.now() - started;
    t.diagnostic(`npm pack ${packMs} ms, npm install -g from the tarball ${installMs} ms`);
    const home = join(prefix, 'lib', 'node_modules', 'fjord');
    const zstdRelease = join('node_modules', 'zstd-napi', 'build', 'Release');
    await mkdir(join(home, zstdRelease), { recursive: true });
    await copyFile(join(ROOT, zstdRelease, 'binding.node'), join(home, zstdRelease, 'binding.node'));

    // Every bin of package.json is a command on PATH.
    const onPath = new Set(await readdir(join(prefix, 'bin')));
    assert.deepEqual(
      Object.keys(pkg.bin).filter((name) => !onPath.has(name)),
      [],
    );
    const version = await inDir(work, 'fjord', ['--version']);
    assert.equal(version.code, 0, version.stderr);
    assert.equal(version.stdout, `fjord ${pkg.version}\n`);
    const help = await inDir(work, 'fjord', ['--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /fjord start \[server\.properties\]/);
    const unknown = await inDir(work, 'fjord', ['launch']);
    assert.equal(unknown.code, 1);
    assert.equal(unknown.stderr, "fjord: unknown command 'launch' (fjord --help lists the commands)\n");
    const topicsHelp = await inDir(work, 'kafka-topics.sh', ['--help']);
    assert.equal(topicsHelp.code, 0, topicsHelp.stderr);
    assert.match(topicsHelp.stdout + topicsHelp.stderr, /--bootstrap-server/);

    // A broker with the packaged config, on a free port; log.dirs stays the config's ./data/kafka-logs.
    broker = spawn('fjord', ['start', '--override', 'listeners=PLAINTEXT://127.0.0.1:0', '--override', 'group.initial.rebalance.delay.ms=0'], {
      cwd: work,
      env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out = new LineCollector(broker as Parameters<typeof exited>[0]);
    await out.waitFor((lines) => lines.some((l) => l.includes('"broker started"')), 60_000, 'the broker to start');
    const port = /listening on PLAINTEXT:\/\/127\.0\.0\.1:(\d+)/.exec(out.lines.join('\n'))?.[1];
    assert.ok(port, 'the broker logged its port');
    assert.ok(out.lines.some((l) => l.includes(`loading configuration from ${join(home, 'config', 'server.properties')}`)));
    const dataDir = join(work, 'data', 'kafka-logs');
    assert.equal((await stat(join(dataDir, '.lock'))).isFile(), true, 'the data is under the current directory');

    const bootstrap = `127.0.0.1:${port}`;
    const created = await inDir(work, 'kafka-topics.sh', ['--bootstrap-server', bootstrap, '--create', '--topic', 'packaged', '--partitions', '1']);
    assert.equal(created.code, 0, created.stderr);
    assert.equal(created.stdout, 'Created topic packaged.\n');
    const produced = await inDir(work, 'kafka-console-producer.sh', ['--bootstrap-server', bootstrap, '--topic', 'packaged'], 'one\ntwo\nthree\n');
    assert.equal(produced.code, 0, produced.stderr);
    const consumed = await inDir(work, 'kafka-console-consumer.sh', [
      '--bootstrap-server',
      bootstrap,
      '--topic',
      'packaged',
      '--from-beginning',
      '--max-messages',
      '3',
    ]);
    assert.equal(consumed.code, 0, consumed.stderr);
    assert.equal(consumed.stdout, 'one\ntwo\nthree\n');

    const stopped = await inDir(base, 'kafka-server-stop.sh', [dataDir]);
    assert.equal(stopped.code, 0, stopped.stderr);
    assert.match(stopped.stdout, /Fjord broker \(pid \d+\) stopped after/);
    assert.equal(await exited(broker as Parameters<typeof exited>[0]), 0);
    // fjord stop's default is the same ./data/kafka-logs, never every broker on the machine.
    const again = await inDir(work, 'fjord', ['stop']);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /^No Fjord broker is running with \.\/data\/kafka-logs: it has no \.lock/);
    const twoDirs = await inDir(work, 'fjord', ['stop', 'a', 'b']);
    assert.equal(twoDirs.code, 1);
    assert.equal(twoDirs.stderr, 'fjord stop takes one log dir (fjord --help)\n');
  } finally {
    if (broker && broker.exitCode === null) broker.kill('SIGKILL');
    await rm(base, { recursive: true, force: true });
  }
});
