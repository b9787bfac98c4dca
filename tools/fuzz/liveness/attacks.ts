/**
 * The attacks of issue 21 as a hostile client without credentials sends them, each against one
 * broker and bounded by a deadline:
 * - F1: one Metadata v4 request naming `n` new topics with allow_auto_topic_creation=true;
 * - F2: one DescribeConfigs naming the broker `n` times, its answer read; and `copies` of it
 *   sent back to back on a connection that never reads, held open for a while;
 * - F5: `n` idle connections, held open for a while.
 * Each returns a one-line outcome for the report. Answers are read without the FrameSplitter
 * (whose per-chunk concatenation is quadratic in a 78 MB answer) and decoded only when small.
 */
import net from 'node:net';
import type { Input, MessageCodec } from '../../../src/protocol/primitives/index.js';
import {
  API_SPECS,
  type DescribeConfigsRequest,
  type DescribeConfigsResponse,
  type MetadataRequest,
  type MetadataResponse,
} from '../../../src/protocol/messages/index.js';
import { errorName } from '../../../src/protocol/errors.js';
import { decodeResponse, encodeRequest } from '../wire.js';

const DECODE_LIMIT = 8 * 1024 * 1024;
const BROKER_RESOURCE = 4;
let correlation = 0x10000;

export interface AttackOutcome {
  /** Answered in time (or, for the held attacks, held as planned). */
  ok: boolean;
  summary: string;
}

function frame<T>(apiKey: number, version: number, body: Input<T>): { bytes: Buffer; correlationId: number } {
  const correlationId = correlation++;
  return { bytes: encodeRequest(apiKey, API_SPECS[apiKey]!.request as MessageCodec<T>, version, body, correlationId), correlationId };
}

/** Sends one frame on a fresh connection and waits for its answer: its size, time and (when small) its body. */
function exchange(
  port: number,
  apiKey: number,
  version: number,
  req: { bytes: Buffer; correlationId: number },
  timeoutMs: number,
): Promise<{ ms: number; bytes: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const s = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let have = 0;
    let need = -1;
    const timer = setTimeout(() => finish(new Error(`no answer in ${timeoutMs} ms (${have} bytes of it came)`)), timeoutMs);
    const finish = (err: Error | null, v?: { ms: number; bytes: number; body: unknown }): void => {
      clearTimeout(timer);
      s.destroy();
      if (err) reject(err);
      else resolve(v!);
    };
    s.on('connect', () => s.write(req.bytes));
    s.on('error', (e) => finish(e));
    s.on('close', () => finish(new Error(`connection closed after ${have} bytes`)));
    s.on('data', (c: Buffer) => {
      chunks.push(c);
      have += c.length;
      if (need < 0 && have >= 4) need = 4 + Buffer.concat(chunks).readInt32BE(0);
      if (need < 0 || have < need) return;
      const all = Buffer.concat(chunks).subarray(4, need);
      const ms = performance.now() - t0;
      if (all.readInt32BE(0) !== req.correlationId) return finish(new Error('answer to another correlation id'));
      let body: unknown = null;
      try {
        if (all.length <= DECODE_LIMIT) body = decodeResponse(apiKey, version, all).body;
      } catch (e) {
        return finish(new Error(`undecodable answer of ${all.length} bytes: ${e instanceof Error ? e.message : String(e)}`));
      }
      finish(null, { ms, bytes: all.length, body });
    });
  });
}

function countErrors(codes: number[]): string {
  const m = new Map<string, number>();
  for (const c of codes) m.set(errorName(c), (m.get(errorName(c)) ?? 0) + 1);
  return [...m].map(([k, n]) => `${n} ${k}`).join(', ');
}

const kb = (n: number): string => (n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MB` : `${Math.round(n / 1024)} KB`);

/** F1: Metadata v4 naming `names` (new topics), allow_auto_topic_creation=true. */
export async function metadataAutoCreate(port: number, names: readonly string[], timeoutMs: number): Promise<AttackOutcome> {
  const req = frame<MetadataRequest>(3, 4, { topics: names.map((name) => ({ name })), allowAutoTopicCreation: true });
  try {
    const r = await exchange(port, 3, 4, req, timeoutMs);
    const md = r.body as MetadataResponse | null;
    const errors = md ? countErrors(md.topics.map((t) => t.errorCode)) : 'not decoded';
    return { ok: true, summary: `${names.length} names (${kb(req.bytes.length)}): answered in ${Math.round(r.ms)} ms, ${kb(r.bytes)}; ${errors}` };
  } catch (e) {
    return { ok: false, summary: `${names.length} names (${kb(req.bytes.length)}): ${e instanceof Error ? e.message : String(e)}` };
  }
}

function describeBroker(brokerId: number, n: number): { bytes: Buffer; correlationId: number } {
  const resources = Array.from({ length: n }, () => ({ resourceType: BROKER_RESOURCE, resourceName: String(brokerId), configurationKeys: null }));
  return frame<DescribeConfigsRequest>(32, 1, { resources, includeSynonyms: false });
}

/** F2: DescribeConfigs naming broker `brokerId` `n` times, the answer read. */
export async function describeConfigsRepeated(port: number, brokerId: number, n: number, timeoutMs: number): Promise<AttackOutcome> {
  const req = describeBroker(brokerId, n);
  try {
    const r = await exchange(port, 32, 1, req, timeoutMs);
    const res = r.body as DescribeConfigsResponse | null;
    const detail = res ? `${res.results.length} results (${countErrors(res.results.map((x) => x.errorCode))})` : 'not decoded';
    return { ok: true, summary: `broker "${brokerId}" x${n} (${kb(req.bytes.length)}): answered in ${Math.round(r.ms)} ms, ${kb(r.bytes)}, ${detail}` };
  } catch (e) {
    return { ok: false, summary: `broker "${brokerId}" x${n} (${kb(req.bytes.length)}): ${e instanceof Error ? e.message : String(e)}` };
  }
}

/** F2, unread: `copies` of the request back to back on a connection that never reads, held `holdMs`. */
export async function describeConfigsUnread(port: number, brokerId: number, n: number, copies: number, holdMs: number): Promise<AttackOutcome> {
  const s = net.connect(port, '127.0.0.1');
  s.on('error', () => undefined);
  let closedByBroker = false;
  s.on('close', () => (closedByBroker = true));
  try {
    await new Promise<void>((resolve, reject) => {
      s.once('connect', resolve);
      s.once('error', reject);
    });
  } catch (e) {
    return { ok: false, summary: `connect: ${e instanceof Error ? e.message : String(e)}` };
  }
  s.pause(); // never read: the answers pile up in the broker's socket buffers, then in its memory
  for (let i = 0; i < copies; i++) s.write(describeBroker(brokerId, n).bytes);
  await new Promise((r) => setTimeout(r, holdMs)); // the attack is holding the connection this long
  const sent = s.bytesWritten;
  const wasClosed = closedByBroker;
  s.destroy();
  return {
    ok: true,
    summary: `${copies} x broker "${brokerId}" x${n} unread for ${holdMs} ms: ${kb(sent)} written${wasClosed ? ', closed by the broker' : ''}`,
  };
}

/** F5: `n` idle connections to the broker (opened one after the other), held `holdMs`, then closed. */
export async function idleConnections(port: number, n: number, holdMs: number, connectTimeoutMs: number): Promise<AttackOutcome> {
  const sockets: net.Socket[] = [];
  let refused = 0;
  let closedByBroker = 0;
  const errors = new Map<string, number>();
  const open = (): Promise<void> =>
    new Promise((resolve) => {
      const s = net.connect(port, '127.0.0.1');
      const timer = setTimeout(() => {
        refused++;
        errors.set('connect timeout', (errors.get('connect timeout') ?? 0) + 1);
        s.destroy();
        resolve();
      }, connectTimeoutMs);
      s.once('connect', () => {
        clearTimeout(timer);
        sockets.push(s);
        s.on('close', () => closedByBroker++);
        resolve();
      });
      s.on('error', (e: NodeJS.ErrnoException) => {
        if (!sockets.includes(s)) {
          clearTimeout(timer);
          refused++;
          errors.set(e.code ?? e.message, (errors.get(e.code ?? e.message) ?? 0) + 1);
          resolve();
        }
      });
    });
  const t0 = performance.now();
  // One at a time: what F5 measures is connections held idle, not a burst (the connections-500
  // bomb is one). A burst overflows the listen backlog (socket.listen.backlog.size, 50; here
  // even 2 connects at once sometimes lose a SYN, which the kernel retries after a second).
  for (let i = 0; i < n; i++) await open();
  const openMs = performance.now() - t0;
  await new Promise((r) => setTimeout(r, holdMs)); // the attack is holding them this long
  const closedMeanwhile = closedByBroker;
  for (const s of sockets) {
    s.removeAllListeners('close');
    s.destroy();
  }
  const why = errors.size > 0 ? ` (${[...errors].map(([k, c]) => `${c} ${k}`).join(', ')})` : '';
  return {
    ok: true,
    summary: `${sockets.length} of ${n} connected in ${Math.round(openMs)} ms, ${refused} refused${why}, ${closedMeanwhile} closed by the broker during ${holdMs} ms`,
  };
}
