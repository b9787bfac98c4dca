/**
 * The probe: what a well-behaved client asks after every hostile input. ApiVersions must list
 * the APIs the broker serves, and Metadata must describe the steady topic; anything else is a
 * failure the fuzzer reports.
 */
import type { ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse } from '../../src/protocol/messages/index.js';
import { FuzzConnection } from './wire.js';

let nextProbeId = 0x7e000000;

export interface ProbeResult {
  ok: boolean;
  latencyMs: number;
  error?: string;
}

/** ApiVersions v3 then Metadata v12 on `conn`; `topic` must come back with its partitions. */
export async function probe(conn: FuzzConnection, topic: string, partitions: number, timeoutMs: number): Promise<ProbeResult> {
  const t0 = performance.now();
  try {
    const av = (await conn.request<ApiVersionsRequest>(
      18,
      3,
      { clientSoftwareName: 'fjord-fuzz-probe', clientSoftwareVersion: '1' },
      timeoutMs,
      nextProbeId++,
    )) as ApiVersionsResponse;
    if (av.errorCode !== 0) throw new Error(`ApiVersions error ${av.errorCode}`);
    if (!av.apiKeys.some((k) => k.apiKey === 0) || !av.apiKeys.some((k) => k.apiKey === 3)) throw new Error('ApiVersions does not list Produce and Metadata');
    const md = (await conn.request<MetadataRequest>(
      3,
      12,
      { topics: [{ name: topic }], allowAutoTopicCreation: false },
      timeoutMs,
      nextProbeId++,
    )) as MetadataResponse;
    const t = md.topics[0];
    if (md.topics.length !== 1 || !t || t.errorCode !== 0 || t.partitions.length !== partitions) {
      throw new Error(`Metadata for ${topic}: ${JSON.stringify({ topics: md.topics.length, error: t?.errorCode, partitions: t?.partitions.length })}`);
    }
    if (md.brokers.length < 1) throw new Error('Metadata lists no broker');
    return { ok: true, latencyMs: performance.now() - t0 };
  } catch (e) {
    return { ok: false, latencyMs: performance.now() - t0, error: e instanceof Error ? e.message : String(e) };
  } finally {
    if (nextProbeId > 0x7ff00000) nextProbeId = 0x7e000000;
  }
}

/** A probe on a new connection, closed afterwards. */
export async function probeFresh(host: string, port: number, topic: string, partitions: number, timeoutMs: number): Promise<ProbeResult> {
  const t0 = performance.now();
  let conn: FuzzConnection;
  try {
    conn = await FuzzConnection.connect(port, host, timeoutMs);
  } catch (e) {
    return { ok: false, latencyMs: performance.now() - t0, error: `connect: ${e instanceof Error ? e.message : String(e)}` };
  }
  try {
    const r = await probe(conn, topic, partitions, timeoutMs);
    return { ...r, latencyMs: performance.now() - t0 };
  } finally {
    conn.close();
  }
}
