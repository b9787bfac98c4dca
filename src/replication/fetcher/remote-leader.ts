/**
 * The leader over the wire (Kafka's RemoteLeaderEndPoint): one connection to the leader's
 * inter-broker listener, looked up in the metadata image whenever it (re)connects, so a leader
 * that restarted on another port is found again. Fetch uses the highest version both sides speak
 * (v13+ address topics by id; a partition whose topic id is unknown makes the request v12), with
 * replica_id (v0-14) and replica_state (v15+) set to this broker, in an incremental fetch session
 * (v7+, KIP-227) as Kafka's followers do. A failed request closes the connection and the session;
 * the fetcher reconnects after its backoff.
 */
import { Connection } from '../../client/connection.js';
import { Api, type ApiDef } from '../../client/apis.js';
import { KafkaError } from '../../client/errors.js';
import * as m from '../../protocol/messages/index.js';
import type { FetchRequest, FetchTopic } from '../../protocol/messages/01-fetch.js';
import type { OffsetForLeaderTopic } from '../../protocol/messages/23-offset-for-leader-epoch.js';
import { ZERO_UUID, type Input } from '../../protocol/primitives/index.js';
import { errorName } from '../../protocol/errors.js';
import { tpKey } from '../../common/partition-keys.js';
import type { InterBrokerInterceptor } from '../../client/inter-broker-interceptor.js';
import type { EpochEndOffsetResult, FetchParams, LeaderEndpoint, ReplicaFetchData, ReplicaFetchPartition } from './types.js';
import type { ClientSecurity } from '../../security/client-security.js';

export const REPLICA_FETCH: ApiDef<m.FetchRequest, m.FetchResponse> = {
  apiKey: 1,
  name: 'Fetch',
  request: m.FetchRequestCodec,
  response: m.FetchResponseCodec,
  clientMax: m.FetchRequestCodec.maxVersion,
};
export const OFFSET_FOR_LEADER_EPOCH: ApiDef<m.OffsetForLeaderEpochRequest, m.OffsetForLeaderEpochResponse> = {
  apiKey: 23,
  name: 'OffsetForLeaderEpoch',
  request: m.OffsetForLeaderEpochRequestCodec,
  response: m.OffsetForLeaderEpochResponseCodec,
  clientMax: m.OffsetForLeaderEpochRequestCodec.maxVersion,
};

/** First Fetch version with diverging_epoch / last_fetched_epoch (KIP-320 truncation on fetch). */
export const TRUNCATION_ON_FETCH_VERSION = 12;
const FIRST_TOPIC_ID_VERSION = 13;
/** First Fetch version with fetch sessions (KIP-227). */
const FIRST_SESSION_VERSION = 7;
const INITIAL_EPOCH = 0;
const FINAL_EPOCH = -1;

interface SessionPlan {
  sessionId: number;
  sessionEpoch: number;
  /** A full request: the leader's session (if one is created) holds exactly `send`. */
  full: boolean;
  useIds: boolean;
  send: readonly ReplicaFetchPartition[];
  forget: readonly ReplicaFetchPartition[];
}

/**
 * The follower's side of an incremental fetch session (Kafka's FetchSessionHandler): the first
 * request is full (epoch 0: the leader creates a session); later ones carry only partitions whose
 * fetch position changed, plus the partitions to forget, and the leader answers only partitions
 * with news. Any error starts over with a full request that also closes the old session.
 */
class FollowerFetchSession {
  id = 0;
  epoch = INITIAL_EPOCH;
  /** What the leader's session holds, by tpKey. */
  readonly sent = new Map<string, ReplicaFetchPartition>();
  private useIds = false;
  /** A session to close with the next full request (the leader drops it when given its id with epoch 0). */
  private closeId = 0;

  plan(partitions: readonly ReplicaFetchPartition[], useIds: boolean, sessionsSupported: boolean): SessionPlan {
    if (!sessionsSupported) return { sessionId: 0, sessionEpoch: FINAL_EPOCH, full: true, useIds, send: partitions, forget: [] };
    if (this.id === 0 || useIds !== this.useIds) {
      const closing = this.id || this.closeId;
      return { sessionId: closing, sessionEpoch: INITIAL_EPOCH, full: true, useIds, send: partitions, forget: [] };
    }
    const wanted = new Map(partitions.map((p) => [tpKey(p.topic, p.partition), p]));
    const send = partitions.filter((p) => !samePosition(this.sent.get(tpKey(p.topic, p.partition)), p));
    const forget = [...this.sent].filter(([k]) => !wanted.has(k)).map(([, p]) => p);
    return { sessionId: this.id, sessionEpoch: this.epoch, full: false, useIds, send, forget };
  }

  accepted(plan: SessionPlan, responseSessionId: number): void {
    if (plan.sessionEpoch === FINAL_EPOCH) return;
    if (plan.full) {
      this.closeId = 0;
      this.sent.clear();
      this.id = responseSessionId;
      this.useIds = plan.useIds;
      // No session (the leader's cache is full): full requests again next time.
      if (responseSessionId === 0) return;
      this.epoch = 1;
    } else {
      this.epoch = this.epoch === 0x7fffffff ? 1 : this.epoch + 1;
      for (const p of plan.forget) this.sent.delete(tpKey(p.topic, p.partition));
    }
    for (const p of plan.send) this.sent.set(tpKey(p.topic, p.partition), p);
  }

  reset(): void {
    if (this.id !== 0) this.closeId = this.id;
    this.id = 0;
    this.epoch = INITIAL_EPOCH;
    this.sent.clear();
  }
}

function samePosition(a: ReplicaFetchPartition | undefined, b: ReplicaFetchPartition): boolean {
  return (
    a !== undefined &&
    a.fetchOffset === b.fetchOffset &&
    a.currentLeaderEpoch === b.currentLeaderEpoch &&
    a.lastFetchedEpoch === b.lastFetchedEpoch &&
    a.logStartOffset === b.logStartOffset &&
    a.maxBytes === b.maxBytes &&
    a.topicId === b.topicId
  );
}
const EMPTY = Buffer.alloc(0);

export interface RemoteLeaderOptions {
  /** This broker: the replica id of its fetches. */
  brokerId: number;
  leaderId: number;
  /** The leader's inter-broker endpoint, from the metadata image; undefined when it is not live. */
  endpointOf: (brokerId: number) => { host: string; port: number } | undefined;
  socketTimeoutMs: number;
  clientId: string;
  /** TLS (and SASL) of the inter-broker listener, as a client; PLAINTEXT when absent. */
  security?: ClientSecurity;
  /** Caps the Fetch version (tests of the OffsetForLeaderEpoch path against a new leader). */
  maxFetchVersion?: number;
  /** Test seam: consulted before each request to the leader is sent (none: nothing is called). */
  interceptor?: InterBrokerInterceptor;
}

export class RemoteLeaderEndpoint implements LeaderEndpoint {
  private conn: Connection | undefined;
  private connecting: Promise<Connection> | undefined;
  private closed = false;
  private readonly fetchSession = new FollowerFetchSession();

  constructor(private readonly opts: RemoteLeaderOptions) {}

  get leaderId(): number {
    return this.opts.leaderId;
  }

  async connect(): Promise<{ truncationOnFetch: boolean }> {
    const c = await this.connection();
    return { truncationOnFetch: this.fetchVersion(c) >= TRUNCATION_ON_FETCH_VERSION };
  }

  private connection(): Promise<Connection> {
    if (this.closed) return Promise.reject(new Error('the replica fetcher is shutting down'));
    if (this.conn && !this.conn.isClosed) return Promise.resolve(this.conn);
    if (!this.connecting) {
      const attempt = this.open();
      this.connecting = attempt;
      // Cleared once settled (also when open() fails before its first await: the failure is not
      // cached, the next round tries again).
      const clear = (): void => {
        if (this.connecting === attempt) this.connecting = undefined;
      };
      attempt.then(clear, clear);
    }
    return this.connecting;
  }

  private async open(): Promise<Connection> {
    const ep = this.opts.endpointOf(this.opts.leaderId);
    if (!ep) throw new Error(`leader ${this.opts.leaderId} is not live (no inter-broker endpoint known)`);
    const c = await Connection.connect(ep.host, ep.port, {
      clientId: this.opts.clientId,
      connectTimeoutMs: this.opts.socketTimeoutMs,
      requestTimeoutMs: this.opts.socketTimeoutMs,
      ...(this.opts.security ? { security: this.opts.security } : {}),
    });
    if (this.closed) {
      c.close();
      throw new Error('the replica fetcher is shutting down');
    }
    this.conn = c;
    // A new connection may be to a restarted leader that knows no session of ours.
    this.fetchSession.reset();
    return c;
  }

  private fetchVersion(c: Connection): number {
    const v = c.versionFor(REPLICA_FETCH as ApiDef<unknown, unknown>);
    if (v === null) throw new Error(`leader ${this.opts.leaderId} serves no Fetch version this broker speaks`);
    return Math.min(v, this.opts.maxFetchVersion ?? v);
  }

  /** Sends on the current connection; any failure closes it (the next round reconnects). */
  private async call<T>(apiKey: number, run: (c: Connection) => Promise<T>): Promise<T> {
    const c = await this.connection();
    try {
      const interceptor = this.opts.interceptor;
      if (interceptor) await interceptor.beforeSend({ from: this.opts.brokerId, to: this.opts.leaderId, apiKey });
      return await run(c);
    } catch (err) {
      if (!(err instanceof KafkaError)) {
        c.close();
        if (this.conn === c) this.conn = undefined;
      }
      throw err;
    }
  }

  /** The incremental fetch session with the leader (tests, diagnostics): id 0 = none. */
  get session(): { id: number; epoch: number; partitions: number } {
    return { id: this.fetchSession.id, epoch: this.fetchSession.epoch, partitions: this.fetchSession.sent.size };
  }

  fetch(partitions: readonly ReplicaFetchPartition[], params: FetchParams): Promise<Map<string, ReplicaFetchData>> {
    return this.call(REPLICA_FETCH.apiKey, async (c) => {
      let version = this.fetchVersion(c);
      if (version >= FIRST_TOPIC_ID_VERSION && partitions.some((p) => !p.topicId || p.topicId === ZERO_UUID)) version = FIRST_TOPIC_ID_VERSION - 1;
      const useIds = version >= FIRST_TOPIC_ID_VERSION;
      const nameOfId = new Map<string, string>();
      if (useIds) for (const p of partitions) nameOfId.set(p.topicId, p.topic);
      const plan = this.fetchSession.plan(partitions, useIds, version >= FIRST_SESSION_VERSION);
      const topics = new Map<string, Input<FetchTopic> & { partitions: Input<m.FetchRequest['topics'][number]['partitions'][number]>[] }>();
      for (const p of plan.send) {
        let t = topics.get(p.topic);
        if (!t) topics.set(p.topic, (t = { topic: p.topic, topicId: useIds ? p.topicId : ZERO_UUID, partitions: [] }));
        t.partitions.push({
          partition: p.partition,
          currentLeaderEpoch: p.currentLeaderEpoch,
          fetchOffset: BigInt(p.fetchOffset),
          lastFetchedEpoch: p.lastFetchedEpoch,
          logStartOffset: BigInt(p.logStartOffset),
          partitionMaxBytes: p.maxBytes,
        });
      }
      const forgotten = new Map<string, { topic: string; topicId: string; partitions: number[] }>();
      for (const p of plan.forget) {
        let f = forgotten.get(p.topic);
        if (!f) forgotten.set(p.topic, (f = { topic: p.topic, topicId: useIds ? p.topicId : ZERO_UUID, partitions: [] }));
        f.partitions.push(p.partition);
      }
      const request: Input<FetchRequest> = {
        replicaId: this.opts.brokerId,
        replicaState: { replicaId: this.opts.brokerId, replicaEpoch: -1n },
        maxWaitMs: params.maxWaitMs,
        minBytes: params.minBytes,
        maxBytes: params.maxBytes,
        isolationLevel: 0,
        sessionId: plan.sessionId,
        sessionEpoch: plan.sessionEpoch,
        topics: [...topics.values()],
        forgottenTopicsData: [...forgotten.values()],
        rackId: '',
      };
      let resp: m.FetchResponse;
      try {
        resp = await c.send(REPLICA_FETCH, request, { version, timeoutMs: this.opts.socketTimeoutMs + params.maxWaitMs });
      } catch (err) {
        this.fetchSession.reset();
        throw err;
      }
      if (resp.errorCode !== 0) {
        // FETCH_SESSION_ID_NOT_FOUND (evicted), INVALID_FETCH_SESSION_EPOCH...: start a new session.
        this.fetchSession.reset();
        throw new KafkaError(resp.errorCode, `replica fetch refused by leader ${this.opts.leaderId}: ${errorName(resp.errorCode)}`);
      }
      this.fetchSession.accepted(plan, resp.sessionId);
      const out = new Map<string, ReplicaFetchData>();
      for (const t of resp.responses) {
        const topic = useIds ? nameOfId.get(t.topicId) : t.topic;
        if (topic === undefined) continue;
        for (const p of t.partitions) {
          const div = p.divergingEpoch;
          out.set(tpKey(topic, p.partitionIndex), {
            errorCode: p.errorCode,
            highWatermark: Number(p.highWatermark),
            logStartOffset: Number(p.logStartOffset),
            divergingEpoch:
              version >= TRUNCATION_ON_FETCH_VERSION && (div.epoch >= 0 || div.endOffset >= 0n)
                ? { epoch: div.epoch, endOffset: Number(div.endOffset) }
                : undefined,
            records: p.records ?? EMPTY,
          });
        }
      }
      return out;
    });
  }

  fetchEpochEndOffsets(
    partitions: readonly { topic: string; partition: number; currentLeaderEpoch: number; leaderEpoch: number }[],
  ): Promise<Map<string, EpochEndOffsetResult>> {
    return this.call(OFFSET_FOR_LEADER_EPOCH.apiKey, async (c) => {
      const topics = new Map<string, Input<OffsetForLeaderTopic> & { partitions: { partition: number; currentLeaderEpoch: number; leaderEpoch: number }[] }>();
      for (const p of partitions) {
        let t = topics.get(p.topic);
        if (!t) topics.set(p.topic, (t = { topic: p.topic, partitions: [] }));
        t.partitions.push({ partition: p.partition, currentLeaderEpoch: p.currentLeaderEpoch, leaderEpoch: p.leaderEpoch });
      }
      const resp = await c.send(OFFSET_FOR_LEADER_EPOCH, { replicaId: this.opts.brokerId, topics: [...topics.values()] });
      const out = new Map<string, EpochEndOffsetResult>();
      for (const t of resp.topics) {
        for (const p of t.partitions)
          out.set(tpKey(t.topic, p.partition), { errorCode: p.errorCode, leaderEpoch: p.leaderEpoch, endOffset: Number(p.endOffset) });
      }
      return out;
    });
  }

  fetchOffset(topic: string, partition: number, currentLeaderEpoch: number, which: 'earliest' | 'latest'): Promise<number> {
    return this.call(Api.ListOffsets.apiKey, async (c) => {
      const resp = await c.send(Api.ListOffsets, {
        replicaId: this.opts.brokerId,
        isolationLevel: 0,
        timeoutMs: this.opts.socketTimeoutMs,
        topics: [{ name: topic, partitions: [{ partitionIndex: partition, currentLeaderEpoch, timestamp: which === 'latest' ? -1n : -2n, maxNumOffsets: 1 }] }],
      });
      const p = resp.topics.find((t) => t.name === topic)?.partitions.find((x) => x.partitionIndex === partition);
      if (!p) throw new Error(`leader ${this.opts.leaderId} did not answer ListOffsets for ${topic}-${partition}`);
      if (p.errorCode !== 0) throw new KafkaError(p.errorCode, `ListOffsets ${which} of ${topic}-${partition}: ${errorName(p.errorCode)}`);
      // v0 answers a list of offsets; later versions one.
      const offset = p.oldStyleOffsets.length > 0 ? p.oldStyleOffsets[0]! : p.offset;
      return Number(offset);
    });
  }

  close(): void {
    this.closed = true;
    this.conn?.close();
    this.conn = undefined;
  }
}
