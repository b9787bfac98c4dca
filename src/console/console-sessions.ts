/**
 * The console's logins, when its cluster needs SASL (the console's client options say
 * SASL_PLAINTEXT or SASL_SSL): a user gives a name, a password and a mechanism (SCRAM-SHA-512,
 * SCRAM-SHA-256 or PLAIN); the console checks them by connecting to the cluster with them, and
 * from then on every API call of that browser runs on clients bound to that principal (its own
 * ConsoleApi: Admin and Producer), so the broker's authorizer decides what the user sees and does.
 * - the session id is 32 random bytes, sent as an HttpOnly, SameSite=Strict cookie and kept only
 *   in this process's map (nothing is written anywhere);
 * - a session ends at logout, after IDLE_MS without a request or MAX_AGE_MS after the login;
 *   its clients are closed then. At most MAX_SESSIONS live at once: the least recently used goes;
 * - the password is held by the session's clients (which re-authenticate with it) and never
 *   logged, echoed or put into an error.
 */
import { randomBytes } from 'node:crypto';
import { Admin, ErrorCode, KafkaError, type ClientOptions } from '../client/index.js';
import { ConsoleApi } from './api-router.js';
import { badRequest, ConsoleError } from './console-error.js';

export const SESSION_COOKIE = 'fjord_console_session';
export const IDLE_MS = 30 * 60_000;
export const MAX_AGE_MS = 8 * 3600_000;
const MAX_SESSIONS = 200;
const MECHANISMS = ['SCRAM-SHA-512', 'SCRAM-SHA-256', 'PLAIN'] as const;
type Mechanism = (typeof MECHANISMS)[number];
/** The broker's answers that mean "not these credentials" (others: it could not be asked). */
const LOGIN_REFUSALS = new Set<number>([ErrorCode.SASL_AUTHENTICATION_FAILED, ErrorCode.UNSUPPORTED_SASL_MECHANISM, ErrorCode.ILLEGAL_SASL_STATE]);

interface Session {
  user: string;
  mechanism: Mechanism;
  api: ConsoleApi;
  lastUsed: number;
  expiresAt: number;
}

export interface SessionInfo {
  /** Whether the API needs a login (the cluster is reached over SASL). */
  loginRequired: boolean;
  /** The logged-in user, when there is one. */
  user?: string;
  /** The mechanisms the login form offers, the configured one first. */
  mechanisms: string[];
}

export class ConsoleSessions {
  private readonly sessions = new Map<string, Session>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly clientOptions: () => ClientOptions | string,
    private readonly limits = { idleMs: IDLE_MS, maxAgeMs: MAX_AGE_MS },
  ) {
    this.sweeper = setInterval(() => this.sweep(), Math.min(60_000, limits.idleMs)).unref();
  }

  /** Whether the cluster is reached over SASL, so that every API call needs a login. */
  loginRequired(): boolean {
    const o = this.clientOptions();
    return typeof o !== 'string' && (o.security?.protocol ?? 'PLAINTEXT').startsWith('SASL_');
  }

  info(cookieHeader: string | undefined): SessionInfo {
    const o = this.clientOptions();
    const configured = typeof o === 'string' ? undefined : o.security?.sasl?.mechanism;
    const mechanisms = configured ? [configured, ...MECHANISMS.filter((m) => m !== configured)] : [...MECHANISMS];
    const user = this.find(cookieHeader)?.user;
    return { loginRequired: this.loginRequired(), mechanisms, ...(user !== undefined ? { user } : {}) };
  }

  /** The API bound to the cookie's session (undefined: none, or it expired). */
  apiFor(cookieHeader: string | undefined): ConsoleApi | undefined {
    return this.find(cookieHeader)?.api;
  }

  /**
   * Checks the credentials by a connection to the cluster (Metadata after the SASL exchange) and
   * answers the new session's id; a refusal is a ConsoleError 401 with the broker's message.
   */
  async login(body: unknown): Promise<{ id: string; user: string }> {
    const base = this.clientOptions();
    if (typeof base === 'string') throw new ConsoleError(503, base);
    if (!this.loginRequired()) throw badRequest('this console does not use logins: its cluster is not reached over SASL');
    const { user, password, mechanism } = credentials(body, (base.security?.sasl?.mechanism as Mechanism | undefined) ?? 'SCRAM-SHA-512');
    const options: ClientOptions = {
      ...base,
      clientId: 'fjord-console',
      enableMetricsPush: false,
      security: { protocol: base.security!.protocol, ...(base.security?.tls ? { tls: base.security.tls } : {}), sasl: { mechanism, username: user, password } },
    };
    const probe = new Admin(options);
    try {
      await probe.describeCluster();
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      const refused = err instanceof KafkaError && LOGIN_REFUSALS.has(err.code);
      throw new ConsoleError(refused ? 401 : 503, refused ? `login refused: ${message}` : `no broker answered: ${message}`);
    } finally {
      await probe.close().catch(() => undefined);
    }
    if (this.sessions.size >= MAX_SESSIONS) {
      let oldest: [string, Session] | undefined;
      for (const e of this.sessions) if (!oldest || e[1].lastUsed < oldest[1].lastUsed) oldest = e;
      if (oldest) this.end(oldest[0]);
    }
    const id = randomBytes(32).toString('base64url');
    const now = Date.now();
    this.sessions.set(id, { user, mechanism, api: new ConsoleApi(() => options), lastUsed: now, expiresAt: now + this.limits.maxAgeMs });
    return { id, user };
  }

  logout(cookieHeader: string | undefined): void {
    const id = sessionId(cookieHeader);
    if (id !== undefined) this.end(id);
  }

  /** The Set-Cookie value for a new session, or one that clears it (id undefined). */
  cookie(id: string | undefined): string {
    const attributes = 'Path=/; HttpOnly; SameSite=Strict';
    return id === undefined
      ? `${SESSION_COOKIE}=; ${attributes}; Max-Age=0`
      : `${SESSION_COOKIE}=${id}; ${attributes}; Max-Age=${Math.floor(this.limits.maxAgeMs / 1000)}`;
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    const apis = [...this.sessions.values()].map((s) => s.api);
    this.sessions.clear();
    await Promise.all(apis.map((a) => a.close().catch(() => undefined)));
  }

  private find(cookieHeader: string | undefined): Session | undefined {
    const id = sessionId(cookieHeader);
    if (id === undefined) return undefined;
    const s = this.sessions.get(id);
    if (!s) return undefined;
    const now = Date.now();
    if (now - s.lastUsed > this.limits.idleMs || now > s.expiresAt) {
      this.end(id);
      return undefined;
    }
    s.lastUsed = now;
    return s;
  }

  private end(id: string): void {
    const s = this.sessions.get(id);
    if (!s) return;
    this.sessions.delete(id);
    s.api.close().catch(() => undefined);
  }

  /** Ends idle and expired sessions, closing their clients (connections to every broker). */
  private sweep(): void {
    const now = Date.now();
    for (const [id, s] of this.sessions) if (now - s.lastUsed > this.limits.idleMs || now > s.expiresAt) this.end(id);
  }
}

function sessionId(cookieHeader: string | undefined): string | undefined {
  if (!cookieHeader) return undefined;
  for (const part of cookieHeader.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === SESSION_COOKIE) {
      const v = part.slice(eq + 1).trim();
      return /^[A-Za-z0-9_-]{43}$/.test(v) ? v : undefined;
    }
  }
  return undefined;
}

function credentials(body: unknown, fallback: Mechanism): { user: string; password: string; mechanism: Mechanism } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('a login needs {"user", "password", "mechanism"?}');
  const b = body as Record<string, unknown>;
  if (typeof b.user !== 'string' || b.user === '') throw badRequest('a login needs a user name');
  if (typeof b.password !== 'string' || b.password === '') throw badRequest('a login needs a password');
  const mechanism = b.mechanism === undefined || b.mechanism === '' ? fallback : b.mechanism;
  if (!MECHANISMS.includes(mechanism as Mechanism)) throw badRequest(`unknown SASL mechanism: give one of ${MECHANISMS.join(', ')}`);
  return { user: b.user, password: b.password, mechanism: mechanism as Mechanism };
}
