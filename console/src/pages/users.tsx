/**
 * The SCRAM users page (DescribeUserScramCredentials; add or replace a credential and delete one
 * with AlterUserScramCredentials: the password goes to the console's server, whose admin client
 * sends the broker only a salted hash) and the client quotas page (DescribeClientQuotas, set or
 * remove a quota of a user, client id or IP with AlterClientQuotas). The broker decides who may.
 */
import { useState } from 'preact/hooks';
import { api, seg } from '../api.js';
import { DangerLink, ErrorLine, Notice } from '../components.js';
import { useApi } from '../hooks.js';

function useAction(reload: () => void) {
  const [error, setError] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const act = async (what: () => Promise<unknown>, done: string) => {
    setError(undefined);
    setNotice(undefined);
    try {
      await what();
      setNotice(done);
      reload();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const messages = (
    <>
      <ErrorLine message={error} />
      {notice && <Notice>{notice}</Notice>}
    </>
  );
  return { act, messages };
}

interface UserRow {
  user: string;
  credentials: { mechanism: string; iterations: number }[];
}

export function UsersPage() {
  const { data, error, reload } = useApi<UserRow[]>('/users');
  const { act, messages } = useAction(reload);
  const [user, setUser] = useState('');
  const [password, setPassword] = useState('');
  const [mechanism, setMechanism] = useState('SCRAM-SHA-512');
  const [iterations, setIterations] = useState('');
  return (
    <section>
      <h1>SCRAM users</h1>
      <ErrorLine message={error} />
      {data && data.length === 0 && <Notice>No SCRAM users.</Notice>}
      {data && data.length > 0 && (
        <table>
          <thead>
            <tr>
              <th>User</th>
              <th>Mechanism</th>
              <th>Iterations</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {data.flatMap((u) =>
              u.credentials.map((c) => (
                <tr key={`${u.user} ${c.mechanism}`} data-testid="user-row">
                  <td>{u.user}</td>
                  <td>{c.mechanism}</td>
                  <td>{c.iterations}</td>
                  <td>
                    <DangerLink
                      label="Delete"
                      question={`Delete ${u.user}'s ${c.mechanism} credential?`}
                      run={() => act(() => api(`/users/${seg(u.user)}/${c.mechanism}`, { method: 'DELETE' }), `Deleted ${u.user}'s ${c.mechanism} credential`)}
                    />
                  </td>
                </tr>
              )),
            )}
          </tbody>
        </table>
      )}
      <form
        class="panel"
        aria-label="Set password"
        onSubmit={(e) => {
          e.preventDefault();
          const body = { user, password, mechanism, iterations: iterations || undefined };
          setPassword('');
          act(() => api('/users', { method: 'POST', body }), `Set ${user}'s ${mechanism} credential`);
        }}
      >
        <h2>Add a user or change a password</h2>
        <label>
          User <input name="user" value={user} onInput={(e) => setUser(e.currentTarget.value)} required />
        </label>
        <label>
          Password{' '}
          <input name="password" type="password" autocomplete="new-password" value={password} onInput={(e) => setPassword(e.currentTarget.value)} required />
        </label>
        <label>
          Mechanism{' '}
          <select value={mechanism} onChange={(e) => setMechanism(e.currentTarget.value)}>
            <option value="SCRAM-SHA-512">SCRAM-SHA-512</option>
            <option value="SCRAM-SHA-256">SCRAM-SHA-256</option>
          </select>
        </label>
        <label>
          Iterations{' '}
          <input name="iterations" type="number" min="4096" placeholder="4096" value={iterations} onInput={(e) => setIterations(e.currentTarget.value)} />
        </label>
        <button type="submit">Set</button>
      </form>
      {messages}
    </section>
  );
}

interface QuotaRow {
  entity: { entityType: string; entityName: string | null }[];
  values: Record<string, number>;
}

const QUOTA_KEYS = ['producer_byte_rate', 'consumer_byte_rate', 'request_percentage', 'controller_mutation_rate', 'connection_creation_rate'];
const entityText = (e: QuotaRow['entity']) => e.map((c) => `${c.entityType}=${c.entityName ?? '<default>'}`).join(', ');

export function QuotasPage() {
  const { data, error, reload } = useApi<QuotaRow[]>('/quotas');
  const { act, messages } = useAction(reload);
  const [entityType, setEntityType] = useState('user');
  const [entityName, setEntityName] = useState('');
  const [key, setKey] = useState(QUOTA_KEYS[0]!);
  const [value, setValue] = useState('');
  const entity = [{ entityType, entityName: entityName === '' ? null : entityName }];
  return (
    <section>
      <h1>Client quotas</h1>
      <ErrorLine message={error} />
      {data && data.length === 0 && <Notice>No quotas.</Notice>}
      {data && data.length > 0 && (
        <table>
          <thead>
            <tr>
              <th>Entity</th>
              <th>Quota</th>
              <th>Value</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {data.flatMap((q) =>
              Object.entries(q.values).map(([k, v]) => (
                <tr key={`${entityText(q.entity)} ${k}`} data-testid="quota-row">
                  <td>{entityText(q.entity)}</td>
                  <td>{k}</td>
                  <td>{v}</td>
                  <td>
                    <DangerLink
                      label="Remove"
                      run={() =>
                        act(() => api('/quotas', { method: 'PUT', body: { entity: q.entity, remove: [k] } }), `Removed ${k} of ${entityText(q.entity)}`)
                      }
                    />
                  </td>
                </tr>
              )),
            )}
          </tbody>
        </table>
      )}
      <form
        class="panel"
        aria-label="Set quota"
        onSubmit={(e) => {
          e.preventDefault();
          act(() => api('/quotas', { method: 'PUT', body: { entity, set: { [key]: value } } }), `Set ${key}=${value} for ${entityText(entity)}`);
        }}
      >
        <h2>Set a quota</h2>
        <label>
          Entity type{' '}
          <select value={entityType} onChange={(e) => setEntityType(e.currentTarget.value)}>
            <option value="user">user</option>
            <option value="client-id">client-id</option>
            <option value="ip">ip</option>
          </select>
        </label>
        <label>
          Name <input name="entityName" placeholder="empty: the default" value={entityName} onInput={(e) => setEntityName(e.currentTarget.value)} />
        </label>
        <label>
          Quota{' '}
          <select value={key} onChange={(e) => setKey(e.currentTarget.value)}>
            {QUOTA_KEYS.map((k) => (
              <option key={k} value={k}>
                {k}
              </option>
            ))}
          </select>
        </label>
        <label>
          Value <input name="value" type="number" min="0" step="any" value={value} onInput={(e) => setValue(e.currentTarget.value)} required />
        </label>
        <button type="submit">Set</button>
      </form>
      {messages}
    </section>
  );
}
