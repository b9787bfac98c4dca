/**
 * The console's calls to its server's JSON API (/api/...): JSON in and out; a failure becomes an
 * ApiError carrying the server's one-line message, which the pages show as is.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Sent on the window when the server answers 401: the session is gone (session.tsx shows the login). */
export const LOGIN_NEEDED = 'fjord:login-needed';

export async function api<T>(path: string, init: { method?: string; body?: unknown } = {}): Promise<T> {
  const method = init.method ?? 'GET';
  const res = await fetch(`/api${path}`, {
    method,
    // Every change says JSON, with a body or not: the server refuses changes that do not.
    headers: method !== 'GET' ? { 'Content-Type': 'application/json' } : {},
    body: init.body !== undefined ? JSON.stringify(init.body) : null,
  });
  const body = (await res.json().catch(() => ({ error: `${res.status} ${res.statusText}` }))) as { error?: string };
  if (res.status === 401 && path !== '/login') dispatchEvent(new Event(LOGIN_NEEDED));
  if (!res.ok) throw new ApiError(res.status, body.error ?? `${res.status} ${res.statusText}`);
  return body as T;
}

/** A path segment (topic and group names may hold dots, dashes and more). */
export const seg = (s: string | number) => encodeURIComponent(String(s));

export function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s === '' ? '' : `?${s}`;
}
