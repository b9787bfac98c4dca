/**
 * The login, when the console's cluster needs SASL (GET /api/session says loginRequired): a user,
 * a password and a SASL mechanism, checked by the server against the cluster (POST /api/login,
 * which sets an HttpOnly session cookie the page never sees); the user's name and a Log out
 * button in the header afterwards. The password stays in the form's field until it is sent.
 */
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api, LOGIN_NEEDED } from './api.js';
import { ErrorLine } from './components.js';

export interface SessionInfo {
  loginRequired: boolean;
  user?: string;
  mechanisms: string[];
}

export function useSession(): { info: SessionInfo | undefined; error: string | undefined; refresh: () => void } {
  const [info, setInfo] = useState<SessionInfo>();
  const [error, setError] = useState<string>();
  const refresh = useCallback(() => {
    api<SessionInfo>('/session').then(
      (s) => {
        setError(undefined);
        setInfo(s);
      },
      (err: Error) => setError(err.message),
    );
  }, []);
  useEffect(() => {
    refresh();
    addEventListener(LOGIN_NEEDED, refresh);
    return () => removeEventListener(LOGIN_NEEDED, refresh);
  }, [refresh]);
  return { info, error, refresh };
}

export function LoginPage({ info, loggedIn }: { info: SessionInfo; loggedIn: () => void }) {
  const [user, setUser] = useState('');
  const [password, setPassword] = useState('');
  const [mechanism, setMechanism] = useState(info.mechanisms[0] ?? 'SCRAM-SHA-512');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setBusy(true);
    try {
      await api('/login', { method: 'POST', body: { user, password, mechanism } });
      setPassword('');
      loggedIn();
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <section>
      <h1>Log in</h1>
      <p class="meta">The cluster needs SASL credentials: the console acts as the user you log in as, with that user's ACLs.</p>
      <form class="panel" onSubmit={submit} aria-label="Log in">
        <label>
          User <input name="user" autocomplete="username" value={user} onInput={(e) => setUser(e.currentTarget.value)} required />
        </label>
        <label>
          Password{' '}
          <input
            name="password"
            type="password"
            autocomplete="current-password"
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
            required
          />
        </label>
        <label>
          Mechanism{' '}
          <select name="mechanism" value={mechanism} onChange={(e) => setMechanism(e.currentTarget.value)}>
            {info.mechanisms.map((m) => (
              <option key={m} value={m}>
                {m}
              </option>
            ))}
          </select>
        </label>
        <button type="submit" disabled={busy}>
          Log in
        </button>
        <ErrorLine message={error} />
      </form>
    </section>
  );
}

export function UserBadge({ user, loggedOut }: { user: string; loggedOut: () => void }) {
  const logout = () => {
    api('/logout', { method: 'POST' }).finally(loggedOut);
  };
  return (
    <span class="user">
      <span data-testid="user">{user}</span>{' '}
      <button type="button" class="link" onClick={logout}>
        Log out
      </button>
    </span>
  );
}
