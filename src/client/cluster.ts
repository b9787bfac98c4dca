/**
 * What a client knows about the cluster: bootstrap servers, one connection per broker, and a
 * metadata cache (brokers, topics, partition leaders) refreshed on demand or when older than
 * `metadataMaxAgeMs`. Producer, Consumer and Admin each own one Cluster.
 */
import { Api } from './apis.js';
import { Connection } from './connection.js';
import { BrokersUnreachableError, ConnectionError, KafkaError, errorName, isRetriableError, noAnswerReason } from './errors.js';
import { ErrorCode } from '../protocol/errors.js';
import type { MetadataResponse } from '../protocol/messages/index.js';
import type { ClientSecurity } from '../security/client-security.js';
import { ClientStats } from './telemetry/client-stats.js';

export interface ClientOptions {
  /** `host:port` list, or a comma-separated string as in `bootstrap.servers`. */
  bootstrapServers: string | readonly string[];
  clientId?: string;
  requestTimeoutMs?: number;
  connectTimeoutMs?: number;
  retryBackoffMs?: number;
  metadataMaxAgeMs?: number;
  /** TLS and SASL for every connection this client opens; PLAINTEXT when absent. */
  security?: ClientSecurity;
  /**
   * For tools: while no broker has answered yet, give up with a BrokersUnreachableError once
   * every bootstrap address has refused the connection (or not resolved) for `timeoutMs`;
   * `setting` names the client property that sets it, for the message. A broker that accepts
   * connections, however slowly, is retried as before, and once any broker has answered this no
   * longer applies. Absent (the default, and what brokers' own clients use): such addresses are
   * retried like any failure, until connectTimeoutMs.
   */
  unreachable?: { timeoutMs: number; setting: string };
  /** Kafka's enable.metrics.push (KIP-714): push telemetry when a broker asks for it; default true. */
  enableMetricsPush?: boolean;
}

export interface BrokerNode {
  nodeId: number;
  host: string;
  port: number;
  rack: string | null;
}

export interface PartitionMetadata {
  partition: number;
  leader: number;
  leaderEpoch: number;
  replicas: number[];
  isr: number[];
  offlineReplicas: number[];
  errorCode: number;
}

export interface TopicMetadata {
  name: string;
  topicId: string;
  isInternal: boolean;
  errorCode: number;
  partitions: PartitionMetadata[];
}

export interface ClusterMetadata {
  clusterId: string | null;
  controllerId: number;
  brokers: Map<number, BrokerNode>;
  topics: Map<string, TopicMetadata>;
}

export function parseHostPort(s: string): { host: string; port: number } {
  const trimmed = s.trim();
  const m = /^\[?([^\]]*?)\]?:(\d+)$/.exec(trimmed);
  if (!m) throw new Error(`invalid broker address "${trimmed}" (expected host:port)`);
  return { host: m[1]!, port: Number(m[2]) };
}

export class Cluster {
  readonly clientId: string;
  readonly requestTimeoutMs: number;
  readonly retryBackoffMs: number;
  private readonly connectTimeoutMs: number;
  private readonly metadataMaxAgeMs: number;
  private readonly security: ClientSecurity | undefined;
  private readonly bootstrap: { host: string; port: number }[];
  private readonly connections = new Map<string, Promise<Connection>>();
  private metadata: ClusterMetadata = { clusterId: null, controllerId: -1, brokers: new Map(), topics: new Map() };
  private metadataAt = 0;
  private closed = false;
  /** Until some broker answered once, give up after connectTimeoutMs: a typo'd address should fail fast. */
  private everConnected = false;
  private readonly unreachable: ClientOptions['unreachable'];
  /** Since when every bootstrap address has failed to answer (0: not so); see ClientOptions.unreachable. */
  private unansweredSince = 0;
  /** What KIP-714 telemetry reports (src/client/telemetry/); measured only with enable.metrics.push. */
  readonly stats = new ClientStats();
  private readonly measure: boolean;

  constructor(options: ClientOptions) {
    const servers = typeof options.bootstrapServers === 'string' ? options.bootstrapServers.split(',') : options.bootstrapServers;
    this.bootstrap = servers.filter((s) => s.trim() !== '').map(parseHostPort);
    if (this.bootstrap.length === 0) throw new Error('no bootstrap servers given');
    this.clientId = options.clientId ?? 'fjord-client';
    this.requestTimeoutMs = options.requestTimeoutMs ?? 30000;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 10000;
    this.retryBackoffMs = options.retryBackoffMs ?? 100;
    this.metadataMaxAgeMs = options.metadataMaxAgeMs ?? 300000;
    this.security = options.security;
    this.unreachable = options.unreachable;
    this.measure = options.enableMetricsPush !== false;
  }

  /** Connection to host:port, shared; reconnects when the previous one died. */
  async connectionTo(host: string, port: number): Promise<Connection> {
    if (this.closed) throw new ConnectionError('client is closed');
    const key = `${host}:${port}`;
    const existing = this.connections.get(key);
    if (existing) {
      const conn = await existing.catch(() => null);
      if (conn && !conn.isClosed) return conn;
    }
    const opening = Connection.connect(host, port, {
      clientId: this.clientId,
      connectTimeoutMs: this.connectTimeoutMs,
      requestTimeoutMs: this.requestTimeoutMs,
      ...(this.security ? { security: this.security } : {}),
      ...(this.measure ? { requestLatency: this.stats.latencyOf(key) } : {}),
    });
    this.connections.set(key, opening);
    if (this.measure)
      opening.then(
        () => this.stats.connectionOpened(),
        () => undefined,
      );
    opening.catch(() => {
      if (this.connections.get(key) === opening) this.connections.delete(key);
    });
    return opening;
  }

  /**
   * Any live broker: known brokers first, then the bootstrap list. With ClientOptions.unreachable,
   * before any broker has answered, addresses that all refuse are tried again (every
   * retryBackoffMs) until its timeout, then a BrokersUnreachableError: so every request of a
   * tool, retried by its caller or not, waits the same few seconds and says the same thing.
   */
  async anyConnection(): Promise<Connection> {
    for (;;) {
      const candidates = [...this.metadata.brokers.values(), ...this.bootstrap];
      let lastError: Error | null = null;
      const reasons = new Set<string>();
      let unanswered = 0;
      for (const c of candidates) {
        try {
          const conn = await this.connectionTo(c.host, c.port);
          this.everConnected = true;
          this.unansweredSince = 0;
          return conn;
        } catch (err) {
          // SASL: a refused authentication is final, as Kafka's AuthenticationException (another broker would say the same).
          if (err instanceof KafkaError && (err.code === 58 || err.code === 33)) throw err;
          lastError = err as Error;
          const reason = err instanceof ConnectionError ? noAnswerReason(err.errno) : undefined;
          if (reason !== undefined) {
            unanswered++;
            reasons.add(reason);
          }
        }
      }
      const nobodyThere = unanswered === candidates.length;
      this.giveUpWhenNobodyAnswers(nobodyThere ? [...reasons] : null);
      if (!(nobodyThere && this.unreachable !== undefined && !this.everConnected)) {
        throw new ConnectionError(`no broker reachable (${this.bootstrap.map((b) => `${b.host}:${b.port}`).join(', ')}): ${lastError?.message ?? ''}`);
      }
      await sleep(this.retryBackoffMs);
    }
  }

  /**
   * ClientOptions.unreachable: throws once no address has answered at all for its timeout.
   * `reasons` is null when some address did answer (timed out, closed, refused TLS): that is
   * not "nobody there", and the clock starts again.
   */
  private giveUpWhenNobodyAnswers(reasons: string[] | null): void {
    if (this.unreachable === undefined || this.everConnected) return;
    if (reasons === null) {
      this.unansweredSince = 0;
      return;
    }
    const now = Date.now();
    if (this.unansweredSince === 0) this.unansweredSince = now;
    const triedMs = now - this.unansweredSince;
    if (triedMs < this.unreachable.timeoutMs) return;
    const where = this.bootstrap.map((b) => `${b.host}:${b.port}`).join(', ');
    throw new BrokersUnreachableError(
      `no broker answered at ${where} (${reasons.join(', ')}; tried for ${Math.max(1, Math.round(triedMs / 1000))} s)`,
      this.unreachable.setting,
    );
  }

  async brokerConnection(nodeId: number): Promise<Connection> {
    let node = this.metadata.brokers.get(nodeId);
    if (!node) {
      await this.refreshMetadata();
      node = this.metadata.brokers.get(nodeId);
    }
    if (!node) throw new ConnectionError(`broker ${nodeId} is not in the cluster metadata`);
    return this.connectionTo(node.host, node.port);
  }

  async controllerConnection(): Promise<Connection> {
    if (this.metadata.controllerId < 0) await this.refreshMetadata();
    if (this.metadata.controllerId >= 0 && this.metadata.brokers.has(this.metadata.controllerId)) {
      return this.brokerConnection(this.metadata.controllerId);
    }
    return this.anyConnection();
  }

  get current(): ClusterMetadata {
    return this.metadata;
  }

  /**
   * Fetches metadata for `topics` (all topics when null/undefined) and merges it into the cache.
   * Retries transient failures until the request timeout.
   */
  async refreshMetadata(topics?: readonly string[] | null, allowAutoTopicCreation = false): Promise<ClusterMetadata> {
    // With ClientOptions.unreachable, a second past its clock: addresses that all refuse end
    // with its BrokersUnreachableError (which says so), not with this loop's last retry.
    const firstContactMs = Math.max(this.connectTimeoutMs, this.unreachable ? this.unreachable.timeoutMs + 1000 : 0);
    const deadline = Date.now() + (this.everConnected ? this.requestTimeoutMs : firstContactMs);
    for (;;) {
      try {
        const conn = await this.anyConnection();
        this.everConnected = true;
        const resp = await conn.send(Api.Metadata, {
          topics: topics == null ? null : topics.map((name) => ({ name })),
          allowAutoTopicCreation,
        });
        this.merge(resp, topics == null);
        return this.metadata;
      } catch (err) {
        if (!isRetriableError(err) || Date.now() + this.retryBackoffMs > deadline) throw err;
        await sleep(this.retryBackoffMs);
      }
    }
  }

  /** Metadata for these topics, from cache when fresh; refreshes for topics not cached yet. */
  async topicsMetadata(topics: readonly string[], allowAutoTopicCreation = false): Promise<Map<string, TopicMetadata>> {
    const stale = Date.now() - this.metadataAt > this.metadataMaxAgeMs;
    const missing = topics.filter((t) => {
      const tm = this.metadata.topics.get(t);
      return !tm || tm.errorCode !== 0 || tm.partitions.some((p) => p.leader < 0);
    });
    if (stale || missing.length > 0) await this.refreshMetadata(topics, allowAutoTopicCreation);
    const out = new Map<string, TopicMetadata>();
    for (const t of topics) {
      const tm = this.metadata.topics.get(t);
      if (tm) out.set(t, tm);
    }
    return out;
  }

  /** Partition count of a topic, waiting (within the request timeout) for it to have leaders. */
  async partitionsFor(topic: string, allowAutoTopicCreation = false): Promise<TopicMetadata> {
    const deadline = Date.now() + this.requestTimeoutMs;
    for (;;) {
      const tm = (await this.topicsMetadata([topic], allowAutoTopicCreation)).get(topic);
      if (tm && tm.errorCode === 0 && tm.partitions.length > 0) return tm;
      const code = tm?.errorCode ?? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
      const retriable = code === ErrorCode.LEADER_NOT_AVAILABLE || (code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION && allowAutoTopicCreation);
      if (!retriable || Date.now() + this.retryBackoffMs > deadline) {
        const why = code === ErrorCode.UNKNOWN_TOPIC_OR_PARTITION ? 'does not exist' : `is not available (${errorName(code)})`;
        throw new KafkaError(code, `Topic '${topic}' ${why}`);
      }
      await sleep(this.retryBackoffMs);
      this.metadataAt = 0;
    }
  }

  leaderFor(topic: string, partition: number): number {
    const tm = this.metadata.topics.get(topic);
    return tm?.partitions.find((p) => p.partition === partition)?.leader ?? -1;
  }

  /** How old the cached metadata is (Infinity when invalidated or never fetched). */
  metadataAgeMs(): number {
    return this.metadataAt === 0 ? Infinity : Date.now() - this.metadataAt;
  }

  invalidate(): void {
    this.metadataAt = 0;
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.connections.values()];
    this.connections.clear();
    for (const p of all) {
      const conn = await p.catch(() => null);
      conn?.close();
    }
  }

  private merge(resp: MetadataResponse, allTopics: boolean): void {
    const brokers = new Map<number, BrokerNode>();
    for (const b of resp.brokers) brokers.set(b.nodeId, { nodeId: b.nodeId, host: b.host, port: b.port, rack: b.rack });
    const topics = allTopics ? new Map<string, TopicMetadata>() : new Map(this.metadata.topics);
    for (const t of resp.topics) {
      if (t.name === null) continue;
      topics.set(t.name, {
        name: t.name,
        topicId: t.topicId,
        isInternal: t.isInternal,
        errorCode: t.errorCode,
        partitions: t.partitions
          .map((p) => ({
            partition: p.partitionIndex,
            leader: p.leaderId,
            leaderEpoch: p.leaderEpoch,
            replicas: p.replicaNodes,
            isr: p.isrNodes,
            offlineReplicas: p.offlineReplicas,
            errorCode: p.errorCode,
          }))
          .sort((a, b) => a.partition - b.partition),
      });
    }
    this.metadata = { clusterId: resp.clusterId, controllerId: resp.controllerId, brokers, topics };
    this.metadataAt = Date.now();
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
