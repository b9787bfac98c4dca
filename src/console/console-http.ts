/**
 * The console over HTTP, for any Node http server: the page (/, index.html), its bundled assets
 * (/assets/*, built by `npm run build` into dist/console/assets/) and the JSON API (/api/*,
 * api-router.ts). The broker's metrics listener hands it every path that is not /metrics or
 * a health endpoint; bin/fjord-console.sh serves it alone.
 * - assets have hashed names: cached for a year, immutable; index.html is revalidated (ETag);
 * - the API is never cached; a change (POST, PUT, DELETE) must say Content-Type: application/json,
 *   which a cross-site form cannot send without a CORS preflight (answered by nobody), so
 *   another site cannot drive the console through a user's browser;
 * - request bodies are bounded (MAX_BODY_BYTES), and only the API reads them;
 * - when the cluster is reached over SASL, /api/login opens a session (console-sessions.ts) and
 *   every other API call runs as that session's principal; without one it answers 401.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import type http from 'node:http';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConsoleApi, type ApiAnswer, type ApiRequest } from './api-router.js';
import { ConsoleSessions } from './console-sessions.js';
import type { ClientOptions } from '../client/index.js';
import { ConsoleError } from './console-error.js';

export const MAX_BODY_BYTES = 1024 * 1024;

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};
const IMMUTABLE = 'public, max-age=31536000, immutable';
const SECURITY_HEADERS: Record<string, string> = {
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'no-referrer',
  'Content-Security-Policy': "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; connect-src 'self'; frame-ancestors 'none'",
};

/** dist/console/assets/ of this package, from src/console/ (tests under tsx) or dist/console/. */
export function defaultAssetsDir(): string {
  return join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'console', 'assets');
}

interface Asset {
  body: Buffer;
  type: string;
  etag: string;
}

export class ConsoleHttp {
  readonly api: ConsoleApi;
  readonly sessions: ConsoleSessions;
  private readonly assets = new Map<string, Asset>();

  constructor(clientOptions: () => ClientOptions | string, assetsDir = defaultAssetsDir()) {
    this.api = new ConsoleApi(clientOptions);
    this.sessions = new ConsoleSessions(clientOptions);
    // Read once: the assets are a few hundred KB and change only with a build.
    if (existsSync(assetsDir)) {
      for (const name of readdirSync(assetsDir)) {
        const body = readFileSync(join(assetsDir, name));
        this.assets.set(name, {
          body,
          type: CONTENT_TYPES[extname(name)] ?? 'application/octet-stream',
          etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"`,
        });
      }
    }
  }

  /** Whether this is a console path (/, /index.html, /assets/..., /api/...). */
  static owns(path: string): boolean {
    return path === '/' || path === '/index.html' || path.startsWith('/assets/') || path === '/api' || path.startsWith('/api/');
  }

  handle(req: http.IncomingMessage, res: http.ServerResponse, path: string, query: URLSearchParams): void {
    for (const [k, v] of Object.entries(SECURITY_HEADERS)) res.setHeader(k, v);
    if (path === '/api' || path.startsWith('/api/')) {
      this.handleApi(req, res, path.slice(4), query);
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      send(res, 405, 'method not allowed\n');
      return;
    }
    const name = path === '/' ? 'index.html' : path.replace(/^\/(assets\/)?/, '');
    const asset = this.assets.get(name);
    if (!asset) {
      send(res, 404, name === 'index.html' ? 'the console is not built: run npm run build\n' : 'not found\n');
      return;
    }
    res.setHeader('Cache-Control', name === 'index.html' ? 'no-cache' : IMMUTABLE);
    res.setHeader('ETag', asset.etag);
    if (req.headers['if-none-match'] === asset.etag) {
      res.statusCode = 304;
      res.end();
      return;
    }
    res.statusCode = 200;
    res.setHeader('Content-Type', asset.type);
    res.setHeader('Content-Length', asset.body.length);
    res.end(req.method === 'HEAD' ? undefined : asset.body);
  }

  async close(): Promise<void> {
    await Promise.all([this.api.close(), this.sessions.close()]);
  }

  private handleApi(req: http.IncomingMessage, res: http.ServerResponse, path: string, query: URLSearchParams): void {
    const method = req.method ?? 'GET';
    const changes = method !== 'GET' && method !== 'HEAD';
    if (changes && !/^application\/json\b/i.test(req.headers['content-type'] ?? '')) {
      req.resume();
      sendJson(res, 415, { error: 'changes need Content-Type: application/json' });
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        sendJson(res, 413, { error: `request body over ${MAX_BODY_BYTES} bytes` }, true);
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on('error', () => undefined);
    req.on('end', () => {
      if (size > MAX_BODY_BYTES) return;
      let body: unknown;
      if (size > 0) {
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          sendJson(res, 400, { error: 'the request body is not valid JSON' });
          return;
        }
      }
      this.answer(req, res, { method: method === 'HEAD' ? 'GET' : method, path: path === '' ? '/' : path, query, body }).then(
        (answer) => sendJson(res, answer.status, answer.body),
        (err: unknown) => sendJson(res, 500, { error: String(err) }),
      );
    });
  }

  /** The session routes, then the API as the session's principal (or the console's own clients without SASL). */
  private async answer(req: http.IncomingMessage, res: http.ServerResponse, r: ApiRequest): Promise<ApiAnswer> {
    const cookie = req.headers.cookie;
    if (r.path === '/session') return r.method === 'GET' ? { status: 200, body: this.sessions.info(cookie) } : notAllowed(r.method);
    if (r.path === '/logout') {
      if (r.method !== 'POST') return notAllowed(r.method);
      this.sessions.logout(cookie);
      res.setHeader('Set-Cookie', this.sessions.cookie(undefined));
      return { status: 200, body: { loggedOut: true } };
    }
    if (r.path === '/login') {
      if (r.method !== 'POST') return notAllowed(r.method);
      try {
        const { id, user } = await this.sessions.login(r.body);
        this.sessions.logout(cookie);
        res.setHeader('Set-Cookie', this.sessions.cookie(id));
        return { status: 200, body: { user } };
      } catch (err) {
        return err instanceof ConsoleError ? { status: err.status, body: { error: err.message } } : { status: 500, body: { error: String(err) } };
      }
    }
    if (!this.sessions.loginRequired()) return this.api.handle(r);
    const api = this.sessions.apiFor(cookie);
    if (!api) return { status: 401, body: { error: 'log in first: the cluster needs SASL credentials', login: true } };
    return api.handle(r);
  }
}

const notAllowed = (method: string): ApiAnswer => ({ status: 405, body: { error: `${method} is not allowed here` } });

function send(res: http.ServerResponse, status: number, body: string): void {
  res.statusCode = status;
  res.setHeader('Content-Type', 'text/plain; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(body));
  res.setHeader('Cache-Control', 'no-store');
  res.end(body);
}

function sendJson(res: http.ServerResponse, status: number, body: unknown, close = false): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', Buffer.byteLength(text));
  res.setHeader('Cache-Control', 'no-store');
  if (close) res.setHeader('Connection', 'close');
  res.end(text);
}
