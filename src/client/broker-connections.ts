/**
 * A broker's connections to other brokers, one per destination, opened on first use over the
 * inter-broker listener (its TLS and SASL through `security`) and opened again after a failure.
 * Used where a broker asks another one something: the transaction markers (WriteTxnMarkers), the
 * transaction verification (AddPartitionsToTxn verify_only) and whether new partitions' leaders
 * serve them (server/cluster/leader-readiness.ts).
 * The test seam (InterBrokerInterceptor) is consulted before each request, as the controller's
 * channel manager and the replica fetchers consult it.
 */
import type { Input } from '../protocol/primitives/index.js';
import { Connection } from './connection.js';
import type { ApiDef } from './apis.js';
import type { ClientSecurity } from '../security/client-security.js';
import type { InterBrokerInterceptor } from './inter-broker-interceptor.js';
import { KafkaError, UnsupportedApiError } from './errors.js';

export interface BrokerConnectionsOptions {
  /** This broker's id (what the interceptor sees as `from`). */
  brokerId: number;
  clientId: string;
  /** Where broker `id` listens for other brokers; undefined when it is not live. */
  endpoint(brokerId: number): { host: string; port: number } | undefined;
  requestTimeoutMs: number;
  /** TLS (and SASL) of the inter-broker listener, as a client; PLAINTEXT when absent. */
  security?: ClientSecurity;
  interceptor?: InterBrokerInterceptor;
}

export class BrokerConnections {
  private readonly conns = new Map<number, Promise<Connection>>();
  private closed = false;

  constructor(private readonly opts: BrokerConnectionsOptions) {}

  /** The open connection to `brokerId` (ApiVersions already asked), opening it when needed. */
  connection(brokerId: number): Promise<Connection> {
    if (this.closed) return Promise.reject(new Error('the broker is shutting down'));
    const existing = this.conns.get(brokerId);
    if (existing) {
      return existing.then((c) => {
        if (!c.isClosed) return c;
        if (this.conns.get(brokerId) === existing) this.conns.delete(brokerId);
        return this.connection(brokerId);
      });
    }
    const ep = this.opts.endpoint(brokerId);
    if (!ep) return Promise.reject(new Error(`broker ${brokerId} is not live`));
    const opening = Connection.connect(ep.host, ep.port, {
      clientId: this.opts.clientId,
      connectTimeoutMs: this.opts.requestTimeoutMs,
      requestTimeoutMs: this.opts.requestTimeoutMs,
      ...(this.opts.security ? { security: this.opts.security } : {}),
    });
    this.conns.set(brokerId, opening);
    opening.catch(() => {
      if (this.conns.get(brokerId) === opening) this.conns.delete(brokerId);
    });
    return opening.then((c) => {
      if (this.closed) c.close();
      return c;
    });
  }

  /**
   * Sends one request on `conn` (from connection()), the interceptor asked first. A failure
   * other than an error answer closes the connection, so the next request opens a fresh one.
   */
  async send<Req, Resp>(
    brokerId: number,
    conn: Connection,
    api: ApiDef<Req, Resp>,
    request: Input<Req>,
    version: number,
    timeoutMs = this.opts.requestTimeoutMs,
    clientId?: string,
  ): Promise<Resp> {
    try {
      await this.opts.interceptor?.beforeSend({ from: this.opts.brokerId, to: brokerId, apiKey: api.apiKey });
      return await conn.send(api, request, { version, timeoutMs, ...(clientId !== undefined ? { clientId } : {}) });
    } catch (err) {
      if (!(err instanceof KafkaError) && !(err instanceof UnsupportedApiError)) conn.close();
      throw err;
    }
  }

  close(): void {
    this.closed = true;
    for (const p of this.conns.values())
      p.then(
        (c) => c.close(),
        () => undefined,
      );
    this.conns.clear();
  }
}
