/**
 * The ACLs page: every binding the broker lists (DescribeAcls: needs Describe on the cluster),
 * a form to add one (CreateAcls: Alter on the cluster) and a Delete button per binding
 * (DeleteAcls of exactly that binding). A principal that may not sees the broker's
 * CLUSTER_AUTHORIZATION_FAILED.
 */
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { DangerLink, ErrorLine, Notice } from '../components.js';
import { useApi } from '../hooks.js';

interface AclRow {
  resourceType: string;
  resourceName: string;
  patternType: string;
  principal: string;
  host: string;
  operation: string;
  permissionType: string;
}

const RESOURCE_TYPES = ['TOPIC', 'GROUP', 'CLUSTER', 'TRANSACTIONAL_ID', 'DELEGATION_TOKEN', 'USER'];
const OPERATIONS = [
  'ALL',
  'READ',
  'WRITE',
  'CREATE',
  'DELETE',
  'ALTER',
  'DESCRIBE',
  'CLUSTER_ACTION',
  'DESCRIBE_CONFIGS',
  'ALTER_CONFIGS',
  'IDEMPOTENT_WRITE',
  'CREATE_TOKENS',
  'DESCRIBE_TOKENS',
];

function Select({ label, value, options, set }: { label: string; value: string; options: string[]; set: (v: string) => void }) {
  return (
    <label>
      {label}{' '}
      <select value={value} onChange={(e) => set(e.currentTarget.value)}>
        {options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    </label>
  );
}

export function AclsPage() {
  const { data, error, reload } = useApi<AclRow[]>('/acls');
  const [actionError, setActionError] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const [form, setForm] = useState<AclRow>({
    resourceType: 'TOPIC',
    resourceName: '',
    patternType: 'LITERAL',
    principal: 'User:',
    host: '*',
    operation: 'READ',
    permissionType: 'ALLOW',
  });
  const set = (k: keyof AclRow) => (v: string) => setForm((f) => ({ ...f, [k]: v }));
  const act = async (what: () => Promise<unknown>, done: string) => {
    setActionError(undefined);
    setNotice(undefined);
    try {
      await what();
      setNotice(done);
      reload();
    } catch (err) {
      setActionError((err as Error).message);
    }
  };
  const describe = (a: AclRow) => `${a.permissionType} ${a.principal} ${a.operation} on ${a.resourceType} ${a.patternType} ${a.resourceName}`;
  return (
    <section>
      <h1>ACLs</h1>
      <ErrorLine message={error} />
      {data && data.length === 0 && <Notice>No ACLs.</Notice>}
      {data && data.length > 0 && (
        <table>
          <thead>
            <tr>
              <th>Principal</th>
              <th>Permission</th>
              <th>Operation</th>
              <th>Resource type</th>
              <th>Pattern</th>
              <th>Resource</th>
              <th>Host</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {data.map((a) => (
              <tr key={describe(a) + a.host} data-testid="acl-row">
                <td>{a.principal}</td>
                <td>{a.permissionType}</td>
                <td>{a.operation}</td>
                <td>{a.resourceType}</td>
                <td>{a.patternType}</td>
                <td>{a.resourceName}</td>
                <td>{a.host}</td>
                <td>
                  <DangerLink
                    label="Delete"
                    question={`Delete the ACL ${describe(a)}?`}
                    run={() => act(() => api('/acls', { method: 'DELETE', body: a }), `Deleted: ${describe(a)}`)}
                  />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form
        class="panel"
        aria-label="Add ACL"
        onSubmit={(e) => {
          e.preventDefault();
          act(() => api('/acls', { method: 'POST', body: form }), `Added: ${describe(form)}`);
        }}
      >
        <h2>Add ACL</h2>
        <label>
          Principal <input name="principal" value={form.principal} onInput={(e) => set('principal')(e.currentTarget.value)} required />
        </label>
        <Select label="Permission" value={form.permissionType} options={['ALLOW', 'DENY']} set={set('permissionType')} />
        <Select label="Operation" value={form.operation} options={OPERATIONS} set={set('operation')} />
        <Select label="Resource type" value={form.resourceType} options={RESOURCE_TYPES} set={set('resourceType')} />
        <Select label="Pattern" value={form.patternType} options={['LITERAL', 'PREFIXED']} set={set('patternType')} />
        <label>
          Resource name <input name="resourceName" value={form.resourceName} onInput={(e) => set('resourceName')(e.currentTarget.value)} required />
        </label>
        <label>
          Host <input name="host" value={form.host} onInput={(e) => set('host')(e.currentTarget.value)} required />
        </label>
        <button type="submit">Add</button>
      </form>
      <ErrorLine message={actionError} />
      {notice && <Notice>{notice}</Notice>}
    </section>
  );
}
