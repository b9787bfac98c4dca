/**
 * The consumer groups pages: the list, and one group (refreshed every 2 s): state, protocol,
 * members and their assignments, and per partition the committed offset, the latest offset and
 * the lag between them in records.
 */
import { seg } from '../api.js';
import { ErrorLine, Notice } from '../components.js';
import { useApi } from '../hooks.js';

interface GroupRow {
  groupId: string;
  state: string;
  type: string;
  protocolType: string;
}

export function GroupsPage() {
  const { data, error } = useApi<GroupRow[]>('/groups', 5000);
  return (
    <section>
      <h1>Consumer groups</h1>
      <ErrorLine message={error} />
      {data && data.length === 0 && <Notice>No groups.</Notice>}
      {data && data.length > 0 && (
        <table>
          <thead>
            <tr>
              <th>Group</th>
              <th>State</th>
              <th>Type</th>
              <th>Protocol type</th>
            </tr>
          </thead>
          <tbody>
            {data.map((g) => (
              <tr key={g.groupId} data-testid="group-row">
                <td>
                  <a href={`#/groups/${seg(g.groupId)}`}>{g.groupId}</a>
                </td>
                <td>{g.state}</td>
                <td>{g.type}</td>
                <td>{g.protocolType}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

interface GroupView {
  groupId: string;
  state: string;
  type: string;
  protocolType: string;
  protocol: string;
  coordinator: { nodeId: number; host: string; port: number };
  members: { memberId: string; groupInstanceId: string | null; clientId: string; clientHost: string; assignment: { topic: string; partition: number }[] }[];
  partitions: {
    topic: string;
    partition: number;
    committed: string | null;
    latest: string | null;
    lag: string | null;
    memberId: string | null;
    clientId: string | null;
  }[];
  totalLag: string;
}

export function GroupPage({ id }: { id: string }) {
  const { data, error } = useApi<GroupView>(`/groups/${seg(id)}`, 2000);
  return (
    <section>
      <h1>
        Group <span data-testid="group-id">{id}</span>
      </h1>
      <ErrorLine message={error} />
      {data && (
        <>
          <dl class="facts">
            <dt>State</dt>
            <dd data-testid="group-state">{data.state}</dd>
            <dt>Type</dt>
            <dd>{data.type}</dd>
            <dt>Protocol</dt>
            <dd>
              {data.protocolType}
              {data.protocol ? ` / ${data.protocol}` : ''}
            </dd>
            <dt>Coordinator</dt>
            <dd>{data.coordinator.nodeId}</dd>
            <dt>Total lag</dt>
            <dd data-testid="total-lag">{data.totalLag}</dd>
          </dl>
          <h2>Members ({data.members.length})</h2>
          <table>
            <thead>
              <tr>
                <th>Member</th>
                <th>Client</th>
                <th>Host</th>
                <th>Assignment</th>
              </tr>
            </thead>
            <tbody>
              {data.members.map((m) => (
                <tr key={m.memberId} data-testid="member-row">
                  <td>
                    {m.memberId}
                    {m.groupInstanceId ? ` (${m.groupInstanceId})` : ''}
                  </td>
                  <td>{m.clientId}</td>
                  <td>{m.clientHost}</td>
                  <td>{m.assignment.map((tp) => `${tp.topic}-${tp.partition}`).join(', ')}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <h2>Lag per partition</h2>
          <table>
            <thead>
              <tr>
                <th>Topic</th>
                <th>Partition</th>
                <th>Committed</th>
                <th>Latest</th>
                <th>Lag</th>
                <th>Client</th>
              </tr>
            </thead>
            <tbody>
              {data.partitions.map((p) => (
                <tr key={`${p.topic}-${p.partition}`} data-testid="lag-row">
                  <td>
                    <a href={`#/topics/${seg(p.topic)}`}>{p.topic}</a>
                  </td>
                  <td>{p.partition}</td>
                  <td>{p.committed ?? '-'}</td>
                  <td>{p.latest ?? '-'}</td>
                  <td data-testid="lag">{p.lag ?? '-'}</td>
                  <td>{p.clientId ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  );
}
