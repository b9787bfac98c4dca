/**
 * The metrics HTTP listener (metrics.listener): GET or HEAD of /metrics (the broker's registry in
 * Prometheus text format), /health/live and /health/ready (health.ts). Node's http/https server,
 * no framework. Whatever a client sends, the broker keeps serving Kafka:
 * - unknown paths answer 404, other methods 405 (with Allow), malformed requests 400 (Node's parser);
 * - request bodies are read and dropped, at most MAX_BODY_BYTES per request (then the connection closes);
 * - at most MAX_CONNECTIONS connections at once (Node closes the ones beyond it at once), with
 *   short header, request and keep-alive timeouts, so a flood of scrapes or idle sockets holds
 *   little; scrapes arriving while one is being rendered share its text (one render at a time);
 * - basic auth (metrics.basic.auth.*) guards /metrics, compared in constant time; the health
 *   endpoints answer without it, for orchestrators' probes;
 * - https with its own key store and optional client certificates (listener-config.ts);
 * - the web console (src/console/, console.enable) at / and under /assets/ and /api/, behind the
 *   same basic auth as /metrics; it reads its own request bodies, within its own bound.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import type { MetricsRegistry } from './registry.js';
import type { BrokerHealth } from './health.js';
import type { MetricsListenerConfig } from './listener-config.js';
import { registerProcessMetrics } from './process-metrics.js';
import { ConsoleHttp } from '../../console/console-http.js';

export const MAX_CONNECTIONS = 16;
export const MAX_BODY_BYTES = 64 * 1024;
const HEADERS_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 15_000;
const KEEP_ALIVE_TIMEOUT_MS = 5_000;
const PATHS = new Set(['/metrics', '/health/live', '/health/ready']);
const JSON_TYPE = 'application/json';

export class MetricsHttpListener {
  private rendering: Promise<string> | undefined;
  private readonly credentials: Buffer | undefined;

  private constructor(
    private readonly server: http.Server,
    private readonly registry: MetricsRegistry,
    private readonly health: BrokerHealth,
    private readonly logger: Logger,
    basicAuth: MetricsListenerConfig['basicAuth'],
    private readonly console: ConsoleHttp | undefined,
  ) {
    this.credentials = basicAuth ? digest(`${basicAuth.user}:${basicAuth.password}`) : undefined;
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => this.handle(req, res));
  }

  /** Binds the listener; a bind failure is an Error naming metrics.listener. */
  static async start(
    cfg: MetricsListenerConfig,
    registry: MetricsRegistry,
    health: BrokerHealth,
    logger: Logger,
    console?: ConsoleHttp,
  ): Promise<MetricsHttpListener> {
    const options: http.ServerOptions = {
      headersTimeout: HEADERS_TIMEOUT_MS,
      requestTimeout: REQUEST_TIMEOUT_MS,
      keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    };
    const server = cfg.tls
      ? https.createServer({
          ...options,
          ...cfg.tls.options,
          requestCert: cfg.tls.clientAuth !== 'none',
          rejectUnauthorized: cfg.tls.clientAuth === 'required',
        })
      : http.createServer(options);
    server.maxConnections = MAX_CONNECTIONS;
    // A client that breaks the protocol or the TLS handshake loses its socket, nothing else.
    server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
      const status =
        err.code === 'HPE_HEADER_OVERFLOW'
          ? '431 Request Header Fields Too Large'
          : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
            ? '408 Request Timeout'
            : '400 Bad Request';
      if (socket.writable) socket.end(`HTTP/1.1 ${status}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
      else socket.destroy();
    });
    server.on('tlsClientError', () => undefined);
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) => {
        reject(new Error(`cannot bind metrics.listener ${cfg.url}: ${err.code ?? err.message}`));
      });
      server.listen({ host: cfg.host === '' ? undefined : cfg.host, port: cfg.port }, resolve);
    });
    server.on('error', (err) => logger.warn({ err: String(err) }, 'metrics listener error'));
    const listener = new MetricsHttpListener(server, registry, health, logger, cfg.basicAuth, console);
    logger.info({ url: cfg.url, port: listener.port, basicAuth: cfg.basicAuth !== undefined, clientAuth: cfg.tls?.clientAuth }, 'metrics listener started');
    return listener;
  }

  /** The bound port (the configured one, or the one chosen for port 0). */
  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Stops accepting and closes every connection (idle or not). */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    if (this.console && this.serveConsole(req, res, this.console)) return;
    // Bodies are never used: read and dropped, up to a bound.
    let bodyBytes = 0;
    req.on('data', (chunk: Buffer) => {
      bodyBytes += chunk.length;
      if (bodyBytes > MAX_BODY_BYTES) req.socket.destroy();
    });
    req.on('error', () => undefined);
    const status = this.check(req, res);
    if (status !== undefined) {
      send(res, status.code, status.body, status.contentType);
      return;
    }
    this.render().then(
      (text) => send(res, 200, text, this.registry.contentType),
      (err: unknown) => {
        this.logger.warn({ err: String(err) }, 'rendering the metrics failed');
        send(res, 500, 'metrics unavailable\n');
      },
    );
  }

  /** Every answer but a scrape's; undefined: render the metrics. */
  private check(req: http.IncomingMessage, res: http.ServerResponse): { code: number; body: string; contentType?: string } | undefined {
    const path = pathOf(req.url ?? '');
    if (path === undefined) return { code: 400, body: 'bad request\n' };
    if (!PATHS.has(path)) return { code: 404, body: 'not found\n' };
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      return { code: 405, body: 'method not allowed\n' };
    }
    if (path === '/health/live') return { code: 200, body: '{"status":"live"}\n', contentType: JSON_TYPE };
    if (path === '/health/ready') {
      const r = this.health.readiness();
      return {
        code: r.ready ? 200 : 503,
        body: `${JSON.stringify(r.ready ? { status: 'ready' } : { status: 'not ready', missing: r.missing })}\n`,
        contentType: JSON_TYPE,
      };
    }
    if (!this.authorized(req.headers.authorization)) {
      res.setHeader('WWW-Authenticate', 'Basic realm="fjord metrics", charset="UTF-8"');
      return { code: 401, body: 'unauthorized\n' };
    }
    return undefined;
  }

  /** The console's paths (false: not one of them); the same basic auth as /metrics. */
  private serveConsole(req: http.IncomingMessage, res: http.ServerResponse, console: ConsoleHttp): boolean {
    let url: URL;
    try {
      url = new URL(req.url ?? '', 'http://metrics.invalid');
    } catch {
      return false;
    }
    if (!ConsoleHttp.owns(url.pathname)) return false;
    if (!this.authorized(req.headers.authorization)) {
      req.resume();
      res.setHeader('WWW-Authenticate', 'Basic realm="fjord metrics", charset="UTF-8"');
      send(res, 401, 'unauthorized\n');
      return true;
    }
    console.handle(req, res, url.pathname, url.searchParams);
    return true;
  }

  /** One render at a time: concurrent scrapes share it. */
  private render(): Promise<string> {
    this.rendering ??= this.registry.metrics().finally(() => (this.rendering = undefined));
    return this.rendering;
  }

  private authorized(header: string | undefined): boolean {
    if (!this.credentials) return true;
    const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '');
    const given = digest(m ? Buffer.from(m[1]!, 'base64').toString('utf8') : '');
    // Same-length digests: the comparison takes the same time whatever was sent.
    return timingSafeEqual(given, this.credentials) && m !== null;
  }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** The path of a request target (origin or absolute form), without its query; undefined when malformed. */
function pathOf(target: string): string | undefined {
  try {
    return new URL(target, 'http://metrics.invalid').pathname;
  } catch {
    return undefined;
  }
}

function send(res: http.ServerResponse, status: number, body: string, contentType = 'text/plain; charset=utf-8'): void {
  if (res.headersSent || res.destroyed) return;
  res.statusCode = status;
  res.setHeader('Content-Type', contentType);
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.setHeader('Cache-Control', 'no-store');
  res.end(body);
}

/** A broker's start: its process metrics, and the listener when metrics.listener is set (else undefined). */
export async function startMetricsEndpoint(
  cfg: MetricsListenerConfig | null,
  registry: MetricsRegistry,
  health: BrokerHealth,
  logger: Logger,
  console?: ConsoleHttp,
): Promise<MetricsHttpListener | undefined> {
  registerProcessMetrics(registry);
  return cfg ? MetricsHttpListener.start(cfg, registry, health, logger, console) : undefined;
}
