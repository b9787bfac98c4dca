/**
 * One TCP connection to one broker. Requests are pipelined: each gets a correlation id and is
 * written at once; responses are matched back by id (Kafka answers in order, but matching by id
 * costs nothing and catches protocol bugs). On connect the client asks ApiVersions and from then
 * on uses, per API, the highest version both sides speak.
 */
import { type Socket, createConnection, isIP } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions as TlsConnectionOptions } from 'node:tls';
import { Reader, Writer, type Input } from '../protocol/primitives/index.js';
import { RequestHeaderCodec, ResponseHeaderCodec } from '../protocol/messages/index.js';
import { ErrorCode } from '../protocol/errors.js';
import { Api, type ApiDef } from './apis.js';
import { ConnectionError, KafkaError, TimeoutError, UnsupportedApiError } from './errors.js';
import type { ClientSecurity } from '../security/client-security.js';
import { saslAuthenticate } from './sasl-client.js';

export interface ConnectionOptions {
  clientId: string;
  connectTimeoutMs: number;
  requestTimeoutMs: number;
  /** TLS and SASL; PLAINTEXT when absent. */
  security?: ClientSecurity;
  /** Where each answered request's round trip (ms) goes: KIP-714's node.request.latency. */
  requestLatency?: { record(ms: number): void };
}

interface Pending {
  correlationId: number;
  apiKey: number;
  flexible: boolean;
  decode: (r: Reader) => unknown;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
  sentAt: number;
}

export interface SendOptions {
  version?: number;
  timeoutMs?: number;
  /** Expected encoded size: the request is then written into one buffer without regrowing. */
  sizeHint?: number;
  /** The request header's client id, when not the connection's (a broker forwarding as Kafka's admin client). */
  clientId?: string;
}

const API_VERSIONS_KEY = 18;
const CLIENT_SOFTWARE_NAME = 'fjord-client';
const CLIENT_SOFTWARE_VERSION = '0.1.0';
/** Kafka's brokers refuse a re-authentication starting within this long of the previous one. */
const MIN_REAUTH_INTERVAL_MS = 1000;

/** Node's TLS options for a ClientTls: Kafka checks the broker's host name unless told not to. */
function tlsOptions(host: string, port: number, t: NonNullable<ClientSecurity['tls']>): TlsConnectionOptions {
  return {
    host,
    port,
    // SNI only for names (an IP address there is refused by some servers and warned about by Node).
    ...(isIP(host) === 0 ? { servername: host } : {}),
    ...(t.ca !== undefined ? { ca: t.ca } : {}),
    ...(t.cert !== undefined ? { cert: t.cert } : {}),
    ...(t.key !== undefined ? { key: t.key } : {}),
    ...(t.pfx !== undefined ? { pfx: t.pfx } : {}),
    ...(t.passphrase !== undefined ? { passphrase: t.passphrase } : {}),
    ...(t.minVersion !== undefined ? { minVersion: t.minVersion } : {}),
    ...(t.maxVersion !== undefined ? { maxVersion: t.maxVersion } : {}),
    ...(t.ciphers !== undefined ? { ciphers: t.ciphers } : {}),
    rejectUnauthorized: true,
    ...(t.verifyHostname === false ? { checkServerIdentity: () => undefined } : {}),
  };
}

function tlsError(err: Error): string {
  const code = (err as NodeJS.ErrnoException).code ?? '';
  if (/WRONG_VERSION_NUMBER|PACKET_LENGTH_TOO_LONG/.test(code) || /wrong version number|packet length too long/i.test(err.message))
    return 'the broker did not answer in TLS (is it a PLAINTEXT listener?)';
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return `${err.message} (ssl.endpoint.identification.algorithm=https checks the host name)`;
  if (/UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED|UNABLE_TO_GET_ISSUER_CERT/.test(code))
    return `${err.message} (is the broker's CA in ssl.truststore.location?)`;
  return err.message;
}

export class Connection {
  private readonly pending = new Map<number, Pending>();
  private nextCorrelationId = 1;
  private chunks: Buffer[] = [];
  private buffered = 0;
  private closedError: Error | null = null;
  /** Broker's version range per API key, from ApiVersions. */
  private brokerVersions = new Map<number, { min: number; max: number }>();

  private constructor(
    private readonly socket: Socket,
    readonly host: string,
    readonly port: number,
    private readonly options: ConnectionOptions,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (data) => this.onData(data));
    socket.on('error', (err) => this.fail(new ConnectionError(`connection to ${host}:${port} failed: ${err.message}`)));
    socket.on('close', () => this.fail(new ConnectionError(`connection to ${host}:${port} closed`)));
  }

  /** The broker's supported version range per API key, as its ApiVersions answer listed them. */
  get brokerApiVersions(): ReadonlyMap<number, { min: number; max: number }> {
    return this.brokerVersions;
  }

  /** Opens the socket (TLS for SSL and SASL_SSL) and negotiates API versions. */
  static async connect(host: string, port: number, options: ConnectionOptions): Promise<Connection> {
    const protocol = options.security?.protocol ?? 'PLAINTEXT';
    const useTls = protocol === 'SSL' || protocol === 'SASL_SSL';
    const socket = await new Promise<Socket>((resolve, reject) => {
      const s = useTls ? tlsConnect(tlsOptions(host, port, options.security?.tls ?? {})) : createConnection({ host, port });
      const timer = setTimeout(() => {
        s.destroy();
        reject(new ConnectionError(`could not connect to ${host}:${port} within ${options.connectTimeoutMs} ms`));
      }, options.connectTimeoutMs);
      s.once(useTls ? 'secureConnect' : 'connect', () => {
        clearTimeout(timer);
        s.removeAllListeners('error');
        resolve(s);
      });
      s.once('error', (err) => {
        clearTimeout(timer);
        s.destroy();
        reject(
          new ConnectionError(
            useTls ? `TLS connection to ${host}:${port} failed: ${tlsError(err)}` : `could not connect to ${host}:${port}: ${err.message}`,
            (err as NodeJS.ErrnoException).code,
          ),
        );
      });
      if (useTls) {
        // A broker that closes without finishing the handshake (refused certificate, plaintext port).
        s.once('close', () => {
          clearTimeout(timer);
          reject(new ConnectionError(`TLS connection to ${host}:${port} failed: closed during the TLS handshake (is it a TLS listener?)`));
        });
      }
    });
    const conn = new Connection(socket, host, port, options);
    try {
      await conn.negotiateVersions();
      await conn.authenticateSasl();
    } catch (err) {
      conn.close();
      throw err;
    }
    return conn;
  }

  get isClosed(): boolean {
    return this.closedError !== null;
  }

  /** The version the client will use for `api`, or null if there is no common version. */
  versionFor(api: ApiDef<unknown, unknown>): number | null {
    const broker = this.brokerVersions.get(api.apiKey);
    if (!broker) return null;
    const v = Math.min(broker.max, api.clientMax);
    return v >= Math.max(broker.min, api.request.minVersion) ? v : null;
  }

  supports(api: ApiDef<unknown, unknown>): boolean {
    return this.versionFor(api) !== null;
  }

  /**
   * Sends a request and resolves with the decoded response. With `noResponse` (Produce acks=0)
   * it resolves once written, with null.
   */
  send<Req, Resp>(api: ApiDef<Req, Resp>, request: Input<Req>, opts?: SendOptions): Promise<Resp>;
  send<Req, Resp>(api: ApiDef<Req, Resp>, request: Input<Req>, opts: SendOptions & { noResponse: true }): Promise<null>;
  send<Req, Resp>(api: ApiDef<Req, Resp>, request: Input<Req>, opts: SendOptions & { noResponse?: boolean } = {}): Promise<Resp | null> {
    // KIP-368: nothing but the re-authentication goes out once it is due (a timer fired late
    // after a stalled event loop), and requests wait while the connection re-authenticates.
    if (this.reauthenticating === null && this.reauthDueAt !== undefined && Date.now() >= this.reauthDueAt) this.startReauthentication();
    if (this.reauthenticating !== null) return this.reauthenticating.then(() => this.send(api, request, opts as SendOptions & { noResponse: true }));
    const version = opts.version ?? this.versionFor(api as ApiDef<unknown, unknown>);
    if (version === null) {
      return Promise.reject(new UnsupportedApiError(`the broker at ${this.host}:${this.port} does not support ${api.name}`));
    }
    return this.sendVersion(api, request, version, opts.timeoutMs ?? this.options.requestTimeoutMs, opts.noResponse ?? false, opts.sizeHint, opts.clientId);
  }

  close(): void {
    this.fail(new ConnectionError(`connection to ${this.host}:${this.port} closed by the client`));
  }

  private sendVersion<Req, Resp>(
    api: ApiDef<Req, Resp>,
    request: Input<Req>,
    version: number,
    timeoutMs: number,
    noResponse: boolean,
    sizeHint = 256,
    clientId = this.options.clientId,
  ): Promise<Resp | null> {
    if (this.closedError) return Promise.reject(this.closedError);
    const correlationId = this.nextCorrelationId;
    this.nextCorrelationId = (this.nextCorrelationId + 1) & 0x7fffffff;
    const flexible = version >= api.request.flexibleFrom;
    const w = new Writer(sizeHint);
    w.int32(0); // size, patched below
    RequestHeaderCodec.write(w, { requestApiKey: api.apiKey, requestApiVersion: version, correlationId, clientId }, flexible ? 2 : 1);
    api.request.write(w, request, version);
    const frame = w.result();
    frame.writeInt32BE(frame.length - 4, 0);
    if (noResponse) {
      return new Promise((resolve, reject) => {
        this.socket.write(frame, (err) => (err ? reject(new ConnectionError(err.message)) : resolve(null)));
      });
    }
    return new Promise<Resp | null>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(correlationId);
        reject(new TimeoutError(`${api.name} request to ${this.host}:${this.port} timed out after ${timeoutMs} ms`));
        // A late answer would desynchronise nothing (we match by id) but the broker is unwell.
      }, timeoutMs);
      this.pending.set(correlationId, {
        correlationId,
        apiKey: api.apiKey,
        flexible,
        decode: (r) => api.response.read(r, version),
        resolve: resolve as (v: unknown) => void,
        reject,
        timer,
        sentAt: this.options.requestLatency ? performance.now() : 0,
      });
      this.socket.write(frame);
    });
  }

  /** ApiVersions v3 first; a broker that does not know v3 answers in v0 with its ranges. */
  private async negotiateVersions(): Promise<void> {
    const api = Api.ApiVersions;
    const request = { clientSoftwareName: CLIENT_SOFTWARE_NAME, clientSoftwareVersion: CLIENT_SOFTWARE_VERSION };
    let resp = await this.sendVersion(api, request, 3, this.options.requestTimeoutMs, false);
    if (resp && resp.errorCode === ErrorCode.UNSUPPORTED_VERSION) {
      const theirs = resp.apiKeys.find((k) => k.apiKey === API_VERSIONS_KEY);
      resp = await this.sendVersion(api, request, Math.min(theirs?.maxVersion ?? 0, 3), this.options.requestTimeoutMs, false);
    }
    if (!resp || resp.errorCode !== 0) throw new KafkaError(resp?.errorCode ?? -1, 'ApiVersions failed');
    for (const k of resp.apiKeys) this.brokerVersions.set(k.apiKey, { min: k.minVersion, max: k.maxVersion });
  }

  /** SASL_PLAINTEXT / SASL_SSL: SaslHandshake v1 and SaslAuthenticate before any other request. */
  private async authenticateSasl(): Promise<void> {
    const security = this.options.security;
    if (security === undefined || (security.protocol !== 'SASL_PLAINTEXT' && security.protocol !== 'SASL_SSL')) return;
    if (security.sasl === undefined) throw new KafkaError(-1, `security.protocol ${security.protocol} needs sasl.mechanism and sasl.jaas.config`);
    const timeout = this.options.requestTimeoutMs;
    // The broker's session clock starts when it accepts the exchange, after this.
    const startedAt = Date.now();
    const authVersion = Math.min(this.brokerVersions.get(Api.SaslAuthenticate.apiKey)?.max ?? 0, Api.SaslAuthenticate.clientMax);
    this.sessionLifetimeMs = await saslAuthenticate(
      {
        handshake: async (mechanism) => (await this.sendVersion(Api.SaslHandshake, { mechanism }, 1, timeout, false))!,
        authenticate: async (authBytes) => (await this.sendVersion(Api.SaslAuthenticate, { authBytes }, authVersion, timeout, false))!,
      },
      security.sasl,
    );
    this.sessionEndsAt = this.sessionLifetimeMs > 0n ? startedAt + Number(this.sessionLifetimeMs) : undefined;
    this.scheduleReauthentication(startedAt);
  }

  /** The SASL session lifetime the broker granted (KIP-368); 0 = unlimited or not SASL. */
  sessionLifetimeMs = 0n;
  /** Times this connection re-authenticated (KIP-368). */
  reauthentications = 0;
  /**
   * The smallest time (ms) left in a session when its re-authentication was sent (diagnostics:
   * negative means a SaslHandshake went out after the session had ended); undefined before any.
   */
  minReauthMarginMs: number | undefined;
  /** When the current session ends at the latest, by this clock (the exchange's start + lifetime). */
  private sessionEndsAt: number | undefined;
  /** When the re-authentication is due; a request sent past it starts it first. */
  private reauthDueAt: number | undefined;
  private reauthTimer: NodeJS.Timeout | undefined;
  private reauthenticating: Promise<void> | null = null;

  /**
   * KIP-368: re-authenticate at 50-60% of the session the broker granted, counted from before the
   * exchange, without waiting for the requests in flight. Kafka's clients start at 85-95% and
   * first wait for their requests in flight; a long poll (a replica fetcher's
   * replica.fetch.wait.max.ms, a consumer's fetch.max.wait.ms) or a loaded broker that reads the
   * connection late can then put the SaslHandshake, or a request sent just before it, past the
   * session's end, and the broker closes the connection. Half a session leaves the other half for
   * that, whatever the session length. Requests already in flight are answered as usual (matched by
   * correlation id); new ones wait for the exchange. Never within a second of the previous
   * exchange (Kafka's brokers take a re-authentication that soon as a plain SaslHandshake and
   * refuse it), unless the session itself is that short.
   */
  private scheduleReauthentication(startedAt: number): void {
    clearTimeout(this.reauthTimer);
    this.reauthDueAt = undefined;
    if (this.sessionLifetimeMs <= 0n || this.closedError) return;
    const lifetime = Number(this.sessionLifetimeMs);
    const after = Math.max(lifetime * (0.5 + Math.random() * 0.1), Math.min(MIN_REAUTH_INTERVAL_MS, lifetime * 0.9));
    this.reauthDueAt = startedAt + after;
    this.reauthTimer = setTimeout(
      () => {
        if (this.reauthenticating === null) this.startReauthentication();
      },
      Math.max(0, this.reauthDueAt - Date.now()),
    );
    this.reauthTimer.unref();
  }

  private startReauthentication(): void {
    this.reauthDueAt = undefined;
    clearTimeout(this.reauthTimer);
    this.reauthenticating = this.reauthenticate().finally(() => {
      this.reauthenticating = null;
    });
  }

  /** Runs the SASL exchange again on the live connection; a failure closes it. */
  private async reauthenticate(): Promise<void> {
    if (this.closedError) return;
    if (this.sessionEndsAt !== undefined) {
      const margin = this.sessionEndsAt - Date.now();
      this.minReauthMarginMs = Math.min(this.minReauthMarginMs ?? margin, margin);
    }
    try {
      await this.authenticateSasl();
      this.reauthentications++;
    } catch (err) {
      this.fail(err instanceof Error ? err : new ConnectionError(String(err)));
    }
  }

  private onData(data: Buffer): void {
    this.chunks.push(data);
    this.buffered += data.length;
    while (this.buffered >= 4) {
      if (this.chunks[0]!.length < 4) this.chunks = [Buffer.concat(this.chunks)];
      const size = this.chunks[0]!.readInt32BE(0);
      // Concatenate only once the whole frame is here, so a large response costs one copy.
      if (this.buffered < 4 + size) return;
      const head = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
      const frame = head.subarray(4, 4 + size);
      const rest = head.subarray(4 + size);
      this.chunks = rest.length > 0 ? [rest] : [];
      this.buffered = rest.length;
      this.onFrame(frame);
    }
  }

  private onFrame(frame: Buffer): void {
    const correlationId = frame.readInt32BE(0);
    const p = this.pending.get(correlationId);
    if (!p) return; // timed out already
    this.pending.delete(correlationId);
    clearTimeout(p.timer);
    this.options.requestLatency?.record(performance.now() - p.sentAt);
    try {
      const r = new Reader(frame);
      // ApiVersions answers always use header v0, whatever the request version.
      ResponseHeaderCodec.read(r, p.flexible && p.apiKey !== API_VERSIONS_KEY ? 1 : 0);
      p.resolve(p.decode(r));
    } catch (err) {
      p.reject(new ConnectionError(`malformed response from ${this.host}:${this.port}: ${(err as Error).message}`));
    }
  }

  private fail(err: Error): void {
    if (this.closedError) return;
    this.closedError = err;
    for (const p of this.pending.values()) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    this.pending.clear();
    clearTimeout(this.reauthTimer);
    this.reauthDueAt = undefined;
    this.socket.destroy();
  }
}
