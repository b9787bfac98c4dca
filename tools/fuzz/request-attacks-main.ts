/**
 * Runs each request attack (request-attacks.ts) against a fresh broker child process and prints
 * what a well-behaved client beside it waited, the broker's own worst event-loop delay and its
 * peak RSS:
 *   npx tsc -p tsconfig.json && node --import tsx tools/fuzz/request-attacks-main.ts \
 *       [--only a,b] [--scale 0.1] [--timeout-ms 300000] [--json FILE] [--prop key=value ...]
 * `--scale` multiplies each attack's size (1 = the issue's); figures go to docs/limits.md.
 */
import { writeFileSync } from 'node:fs';
import { Command } from 'commander';
import type { Input, MessageCodec } from '../../src/protocol/primitives/index.js';
import { API_SPECS } from '../../src/protocol/messages/index.js';
import type {
  CreateTopicsRequest,
  FindCoordinatorRequest,
  FindCoordinatorResponse,
  JoinGroupRequest,
  JoinGroupResponse,
  SyncGroupRequest,
  SyncGroupResponse,
} from '../../src/protocol/messages/index.js';
import { BrokerProcess } from './broker-process.js';
import {
  ATTACKS,
  type Attack,
  BIG_GROUP,
  STEADY_TOPIC,
  SideClient,
  WIDE_PARTITIONS,
  WIDE_TOPIC,
  runAttack,
  sendRaw,
  type AttackFigures,
} from './request-attacks.js';
import { decodeResponse, encodeRequest } from './wire.js';

async function request<T>(port: number, apiKey: number, version: number, body: Input<T>): Promise<unknown> {
  const frame = encodeRequest(apiKey, API_SPECS[apiKey]!.request as MessageCodec<T>, version, body, 1, 'attack-setup');
  return decodeResponse(apiKey, version, await sendRaw(port, frame, 60_000)).body;
}

/** The steady and wide topics, and a group whose one member has 10 KB of metadata and assignment. */
async function setUp(port: number): Promise<void> {
  await request<CreateTopicsRequest>(port, 19, 7, {
    topics: [
      { name: STEADY_TOPIC, numPartitions: 1, replicationFactor: 1 },
      { name: WIDE_TOPIC, numPartitions: WIDE_PARTITIONS, replicationFactor: 1 },
    ],
    timeoutMs: 30_000,
  });
  // the group coordinator answers once __consumer_offsets exists and is loaded
  for (let i = 0; ; i++) {
    const fc = (await request<FindCoordinatorRequest>(port, 10, 4, { keyType: 0, coordinatorKeys: [BIG_GROUP] })) as FindCoordinatorResponse;
    if (fc.coordinators[0]?.errorCode === 0) break;
    if (i > 100) throw new Error(`no group coordinator: ${JSON.stringify(fc.coordinators[0])}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const join = (memberId: string): Promise<unknown> =>
    request<JoinGroupRequest>(port, 11, 5, {
      groupId: BIG_GROUP,
      sessionTimeoutMs: 300_000,
      rebalanceTimeoutMs: 60_000,
      memberId,
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: Buffer.alloc(10_000, 1) }],
    });
  // v4+: the first join answers MEMBER_ID_REQUIRED with the id to join with
  const first = (await join('')) as JoinGroupResponse;
  const joined = (await join(first.memberId)) as JoinGroupResponse;
  const synced = (await request<SyncGroupRequest>(port, 14, 3, {
    groupId: BIG_GROUP,
    generationId: joined.generationId,
    memberId: joined.memberId,
    assignments: [{ memberId: joined.memberId, assignment: Buffer.alloc(10_000, 2) }],
  })) as SyncGroupResponse;
  if (joined.errorCode !== 0 || synced.errorCode !== 0) throw new Error(`group set-up failed: join ${joined.errorCode}, sync ${synced.errorCode}`);
}

interface Row extends AttackFigures {
  loopDelayMs: number;
  startRssMb: number;
  peakRssMb: number;
  brokerUp: boolean;
}

/** One attack against a fresh broker: the broker's loop and RSS figures over the attack's window. */
async function measure(broker: BrokerProcess, side: SideClient, a: Attack, n: number, timeoutMs: number): Promise<Row> {
  await setUp(broker.port);
  await new Promise((r) => setTimeout(r, 1500)); // a loop report before the attack
  broker.takeWindow();
  const startRss = broker.sample() ?? 0;
  const figures = await runAttack(broker.port, a, n, side, timeoutMs);
  await new Promise((r) => setTimeout(r, 1200)); // the loop report covering the attack
  const w = broker.takeWindow();
  return {
    ...figures,
    loopDelayMs: Math.round(w.loopDelayMs),
    startRssMb: Math.round(startRss / 2 ** 20),
    peakRssMb: Math.round(w.peakRss / 2 ** 20),
    brokerUp: !broker.exited,
  };
}

async function main(): Promise<void> {
  const program = new Command('request-attacks')
    .option('--only <list>', `comma-separated: ${ATTACKS.map((a) => a.name).join(', ')}`)
    .option('--scale <x>', "size factor against the issue's sizes", '1')
    .option('--timeout-ms <n>', 'how long to wait for each answer', '300000')
    .option('--json <file>', 'write the rows as JSON')
    .option('--prop <kv...>', 'broker properties key=value', [] as string[])
    .option('--cpu-prof-dir <dir>', 'write a CPU profile of each broker there (node --cpu-prof)');
  program.parse();
  const o = program.opts<{ only?: string; scale: string; timeoutMs: string; json?: string; prop: string[]; cpuProfDir?: string }>();
  const only = o.only?.split(',');
  const props = Object.fromEntries(o.prop.map((kv) => kv.split('=', 2) as [string, string]));
  const rows: Row[] = [];
  for (const a of ATTACKS.filter((x) => !only || only.includes(x.name))) {
    const n = Math.max(1, Math.round(a.n * Number(o.scale)));
    const nodeArgs = o.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${o.cpuProfDir}`, `--cpu-prof-name=${a.name}.cpuprofile`] : [];
    const broker = await BrokerProcess.start({ props, rssKillBytes: 3 * 1024 ** 3, nodeArgs });
    const side = new SideClient(broker.port);
    try {
      const row = await measure(broker, side, a, n, Number(o.timeoutMs));
      rows.push(row);
      process.stdout.write(`${JSON.stringify(row)}\n`);
    } catch (e) {
      process.stdout.write(`${a.name}: ${e instanceof Error ? e.message : String(e)}\n`);
    } finally {
      await side.stop();
      await broker.stop();
    }
  }
  process.stdout.write(
    '\n| attack | n | request | answer | answer time | side client worst | broker loop worst | RSS start/peak |\n|---|---|---|---|---|---|---|---|\n',
  );
  for (const r of rows) {
    const kb = (b: number | null): string => (b === null ? '-' : b > 1e6 ? `${(b / 1e6).toFixed(1)} MB` : `${(b / 1e3).toFixed(1)} KB`);
    process.stdout.write(
      `| ${r.attack} | ${r.n} | ${kb(r.requestBytes)} | ${kb(r.answerBytes)} | ${r.answerMs ?? r.answerError} ms | ${r.sideWorstMs} ms | ${r.loopDelayMs} ms | ${r.startRssMb}/${r.peakRssMb} MB${r.brokerUp ? '' : ' (broker down)'} |\n`,
    );
  }
  if (o.json) writeFileSync(o.json, JSON.stringify(rows, null, 1));
}

await main();
