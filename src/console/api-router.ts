/**
 * The console's JSON API under /api/: one route per page's read or change, each over Fjord's
 * client library (Admin, and a Producer for test messages) made on first use from the
 * ClientOptions the console was given. Answers are JSON; a failure is {"error": "..."} with a
 * status: 400 for bad input, 404 for an unknown topic, partition or group, 409/400 for a broker's
 * refusal (with the broker's message), 503 while no broker answers. Routes are listed in
 * docs/console.md.
 */
import { Admin, BrokersUnreachableError, ConnectionError, KafkaError, Producer, TimeoutError, errorName, type ClientOptions } from '../client/index.js';
import { ErrorCode } from '../client/index.js';
import { badRequest, ConsoleError } from './console-error.js';
import { securityRoutes } from './security-view.js';
import { clusterView } from './cluster-view.js';
import {
  addPartitions,
  alterTopicConfigs,
  createTopic,
  deleteTopic,
  describeTopic,
  listTopics,
  MAX_PAGE_SIZE,
  topicConfigs,
  type CreateTopicRequest,
  type Page,
} from './topics-view.js';
import { browse, MAX_LIMIT, produce, type BrowseQuery, type ProduceRequest } from './messages-view.js';
import { describeGroup, listGroups } from './groups-view.js';
import { DEFAULT_POINTS, groupHistory, historyQuery, MAX_POINTS } from './group-history-view.js';
import { resetOffsets, undoReset, type ResetRequest } from './group-reset.js';
import { OffsetHistoryError } from '../client/offset-history/history-reader.js';

export interface ApiRequest {
  method: string;
  /** The path after /api, e.g. /topics/t/partitions/0/messages. */
  path: string;
  query: URLSearchParams;
  /** The parsed JSON body (undefined without one). */
  body: unknown;
}

export interface ApiAnswer {
  status: number;
  body: unknown;
}

type Handler = (req: ApiRequest, params: string[]) => Promise<unknown>;

export class ConsoleApi {
  private admin: Admin | undefined;
  private producer: Producer | undefined;
  private readonly routes: [method: string, pattern: RegExp, handler: Handler][];

  /** `clientOptions` returns why not (a string) while the cluster cannot be reached (a broker starting). */
  constructor(private readonly clientOptions: () => ClientOptions | string) {
    const seg = '([^/]+)';
    this.routes = [
      ...securityRoutes(() => this.client()),
      ['GET', /^\/cluster$/, () => clusterView(this.client())],
      ['GET', /^\/topics$/, (r) => listTopics(this.client(), r.query.get('search') ?? '', page(r.query, 50))],
      ['POST', /^\/topics$/, (r) => createTopic(this.client(), createTopicBody(objectBody(r))).then(() => ({ created: objectBody(r).name }))],
      ['GET', new RegExp(`^/topics/${seg}$`), (r, [t]) => describeTopic(this.client(), t!, page(r.query, 100))],
      ['DELETE', new RegExp(`^/topics/${seg}$`), (_r, [t]) => deleteTopic(this.client(), t!).then(() => ({ deleted: t }))],
      ['POST', new RegExp(`^/topics/${seg}/partitions$`), (r, [t]) => addPartitions(this.client(), t!, Number(objectBody(r).count)).then(() => ({ ok: true }))],
      ['GET', new RegExp(`^/topics/${seg}/configs$`), (_r, [t]) => topicConfigs(this.client(), t!)],
      ['PUT', new RegExp(`^/topics/${seg}/configs$`), (r, [t]) => alterTopicConfigs(this.client(), t!, configsBody(objectBody(r))).then(() => ({ ok: true }))],
      ['GET', new RegExp(`^/topics/${seg}/partitions/(\\d+)/messages$`), (r, [t, p]) => browse(this.client(), browseQuery(t!, Number(p), r.query))],
      ['POST', new RegExp(`^/topics/${seg}/messages$`), (r, [t]) => produce(this.client(), this.producerClient(), produceBody(t!, objectBody(r)))],
      ['GET', /^\/groups$/, () => listGroups(this.client())],
      ['GET', new RegExp(`^/groups/${seg}$`), (r, [g]) => describeGroup(this.client(), g!, this.options(), page(r.query, 100))],
      [
        'GET',
        new RegExp(`^/groups/${seg}/history$`),
        (r, [g]) =>
          groupHistory(this.client(), this.options(), g!, historyQuery(r.query.get('window'), intParam(r.query, 'points', DEFAULT_POINTS, MAX_POINTS))),
      ],
      ['POST', new RegExp(`^/groups/${seg}/reset$`), (r, [g]) => resetOffsets(this.client(), g!, resetBody(objectBody(r)))],
      ['POST', new RegExp(`^/groups/${seg}/undo$`), (r, [g]) => undoReset(this.client(), this.options(), g!, undoBody(objectBody(r)))],
    ];
  }

  async handle(req: ApiRequest): Promise<ApiAnswer> {
    let pathMatched = false;
    for (const [method, pattern, handler] of this.routes) {
      const m = pattern.exec(req.path);
      if (!m) continue;
      pathMatched = true;
      if (method !== req.method) continue;
      let params: string[];
      try {
        params = m.slice(1).map((s) => decodeURIComponent(s));
      } catch {
        return { status: 400, body: { error: `malformed percent-encoding in the path: ${req.path}` } };
      }
      try {
        return { status: 200, body: await handler(req, params) };
      } catch (err) {
        return failure(err);
      }
    }
    return pathMatched ? { status: 405, body: { error: `${req.method} is not allowed here` } } : { status: 404, body: { error: `no such API: ${req.path}` } };
  }

  async close(): Promise<void> {
    await this.producer?.close();
    await this.admin?.close();
  }

  private options(): ClientOptions {
    const o = this.clientOptions();
    if (typeof o === 'string') throw new ConsoleError(503, o);
    return { clientId: 'fjord-console', ...o, enableMetricsPush: false };
  }

  private client(): Admin {
    this.admin ??= new Admin(this.options());
    return this.admin;
  }

  private producerClient(): Producer {
    this.producer ??= new Producer({ ...this.options(), lingerMs: 0 });
    return this.producer;
  }
}

/** The principal may not (403), or its credentials no longer hold (401). */
const AUTH_STATUS = new Map<number, number>([
  [ErrorCode.TOPIC_AUTHORIZATION_FAILED, 403],
  [ErrorCode.GROUP_AUTHORIZATION_FAILED, 403],
  [ErrorCode.CLUSTER_AUTHORIZATION_FAILED, 403],
  [ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, 403],
  [ErrorCode.SASL_AUTHENTICATION_FAILED, 401],
]);

/** A failure as the page shows it. */
function failure(err: unknown): ApiAnswer {
  if (err instanceof ConsoleError) return { status: err.status, body: { error: err.message } };
  if (err instanceof OffsetHistoryError) return { status: 400, body: { error: err.message } };
  if (err instanceof KafkaError) {
    const status =
      AUTH_STATUS.get(err.code) ??
      (err.code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION || err.code === ErrorCode.GROUP_ID_NOT_FOUND
        ? 404
        : err.code === ErrorCode.TOPIC_ALREADY_EXISTS
          ? 409
          : 400);
    // The broker's own message; its error name when it sent none.
    const name = errorName(err.code);
    return { status, body: { error: err.message === name ? name : `${name}: ${err.message}`, code: err.code } };
  }
  if (err instanceof BrokersUnreachableError || err instanceof ConnectionError || err instanceof TimeoutError)
    return { status: 503, body: { error: `no broker answered: ${err.message}` } };
  return { status: 500, body: { error: err instanceof Error ? err.message : String(err) } };
}

function objectBody(r: ApiRequest): Record<string, unknown> {
  if (typeof r.body !== 'object' || r.body === null || Array.isArray(r.body)) throw badRequest('the request needs a JSON object body');
  return r.body as Record<string, unknown>;
}

function optionalInt(b: Record<string, unknown>, name: string): number | undefined {
  const v = b[name];
  if (v === undefined || v === null || v === '') return undefined;
  const n = typeof v === 'string' ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n)) throw badRequest(`${name} must be an integer`);
  return n;
}

function optionalString(b: Record<string, unknown>, name: string): string | null | undefined {
  const v = b[name];
  if (v === undefined || v === null) return v;
  if (typeof v !== 'string') throw badRequest(`${name} must be a string`);
  return v;
}

function stringMap(b: Record<string, unknown>, name: string): Record<string, string> | undefined {
  const v = b[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v) || Object.values(v).some((x) => typeof x !== 'string')) throw badRequest(`${name} must map names to strings`);
  return v as Record<string, string>;
}

function createTopicBody(b: Record<string, unknown>): CreateTopicRequest {
  const name = optionalString(b, 'name');
  if (!name) throw badRequest('a topic needs a name');
  const partitions = optionalInt(b, 'partitions');
  const replicationFactor = optionalInt(b, 'replicationFactor');
  const configs = stringMap(b, 'configs');
  return {
    name,
    ...(partitions !== undefined ? { partitions } : {}),
    ...(replicationFactor !== undefined ? { replicationFactor } : {}),
    ...(configs ? { configs } : {}),
  };
}

function produceBody(topic: string, b: Record<string, unknown>): ProduceRequest {
  const partition = optionalInt(b, 'partition');
  const key = optionalString(b, 'key');
  const headers = stringMap(b, 'headers');
  return {
    topic,
    value: optionalString(b, 'value') ?? null,
    ...(key !== undefined ? { key } : {}),
    ...(partition !== undefined ? { partition } : {}),
    ...(headers ? { headers } : {}),
  };
}

function configsBody(b: Record<string, unknown>): { set?: Record<string, string>; delete?: string[] } {
  const set = stringMap(b, 'set');
  const del = b.delete;
  if (del !== undefined && (!Array.isArray(del) || del.some((x) => typeof x !== 'string'))) throw badRequest('delete must list config names');
  return { ...(set ? { set } : {}), ...(del ? { delete: del as string[] } : {}) };
}

function intParam(q: URLSearchParams, name: string, fallback: number, max: number): number {
  const raw = q.get(name);
  if (raw === null || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw badRequest(`${name} must be a non-negative integer, not "${raw}"`);
  return Math.min(Number(raw), max);
}

function page(q: URLSearchParams, size: number): Page {
  return { page: intParam(q, 'page', 0, Number.MAX_SAFE_INTEGER), size: Math.max(1, intParam(q, 'size', size, MAX_PAGE_SIZE)) };
}

/** A time as ISO 8601 (2026-12-05T09:00:00Z, or a date) or milliseconds since the epoch. */
export function parseTime(raw: string): bigint {
  if (/^\d+$/.test(raw)) return BigInt(raw);
  const ms = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:?\d{2})?)?$/.test(raw) ? Date.parse(raw) : Number.NaN;
  if (Number.isNaN(ms)) throw badRequest(`malformed time "${raw}": give ISO 8601 (2026-12-05T09:00:00Z) or milliseconds since the epoch`);
  return BigInt(ms);
}

function browseQuery(topic: string, partition: number, p: URLSearchParams): BrowseQuery {
  const limit = Math.max(1, intParam(p, 'limit', 50, MAX_LIMIT));
  const filter = p.get('filter') || undefined;
  const base = { topic, partition, limit, ...(filter ? { filter } : {}) };
  const offset = p.get('offset');
  const time = p.get('time');
  if (offset !== null && offset !== '') {
    if (!/^\d+$/.test(offset)) throw badRequest(`offset must be a non-negative integer, not "${offset}"`);
    return { ...base, from: 'offset', offset: BigInt(offset) };
  }
  if (time !== null && time !== '') return { ...base, from: 'time', time: parseTime(time) };
  return { ...base, from: 'newest' };
}

/** A reset: {"to": "earliest"|"latest"|"time"|"shift", "time"?, "shift"?, "topic"?, "execute"?}. */
function resetBody(b: Record<string, unknown>): ResetRequest {
  const to = optionalString(b, 'to');
  const topic = optionalString(b, 'topic') || undefined;
  const base = { execute: b.execute === true, ...(topic ? { topic } : {}) };
  if (to === 'earliest' || to === 'latest') return { ...base, target: { to } };
  if (to === 'time') return { ...base, target: { to, time: parseTime(optionalString(b, 'time') ?? '') } };
  if (to === 'shift') {
    const by = optionalInt(b, 'shift');
    if (by === undefined) throw badRequest('a shift needs "shift": the number of offsets, negative to go back');
    return { ...base, target: { to, by: BigInt(by) } };
  }
  throw badRequest(`"to" must be earliest, latest, time or shift, not "${to ?? ''}"`);
}

/** An undo: {"time"?: back to that time, else before the last reset; "execute"?}. */
function undoBody(b: Record<string, unknown>): { at?: number; execute: boolean } {
  const time = optionalString(b, 'time');
  return { execute: b.execute === true, ...(time ? { at: Number(parseTime(time)) } : {}) };
}
