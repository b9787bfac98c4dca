/**
 * The consumer groups pages: the list, and one group (refreshed every 2 s): state, protocol,
 * members and their assignments, and per partition the committed offset, the latest offset and
 * the lag between them in records and in time; below, the offset history's chart and changes
 * (group-history.tsx) and the reset and undo forms (group-reset.tsx).
 */
import { useState } from 'preact/hooks';
import { query, seg } from '../api.js';
import { ErrorLine, Notice, Pager } from '../components.js';
import { useApi } from '../hooks.js';
import { GroupHistory } from './group-history.js';
import { ResetPanel, UndoPanel } from './group-reset.js';

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
    lagTimeMs: number | null;
    memberId: string | null;
    clientId: string | null;
  }[];
  /** The rows are a page of partitionCount; totalLag counts them all. */
  partitionCount: number;
  page: number;
  size: number;
  totalLag: string;
}

/** An age, compactly as kafka-consumer-groups.sh --lag-time prints it: 850ms, 12s, 4m12s, 2h05m, 3d04h. */
function age(ms: number | null): string {
  if (ms === null) return '-';
  if (ms < 1000) return `${Math.floor(ms)}ms`;
  const s = Math.floor(ms / 1000);
  const two = (n: number) => String(n).padStart(2, '0');
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${two(s % 60)}s`;
  if (s < 86400) return `${Math.floor(s / 3600)}h${two(Math.floor(s / 60) % 60)}m`;
  return `${Math.floor(s / 86400)}d${two(Math.floor(s / 3600) % 24)}h`;
}

export function GroupPage({ id }: { id: string }) {
  const [page, setPage] = useState(0);
  const { data, error, reload } = useApi<GroupView>(`/groups/${seg(id)}${query({ page: page || undefined })}`, 2000);
  // Bumped by a reset or an undo: the history below reloads at once.
  const [version, setVersion] = useState(0);
  const changed = () => {
    reload();
    setVersion((v) => v + 1);
  };
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
            <dd data-testid="coordinator">{data.coordinator.nodeId}</dd>
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
          <h2>Lag per partition ({data.partitionCount})</h2>
          <table>
            <thead>
              <tr>
                <th>Topic</th>
                <th>Partition</th>
                <th>Committed</th>
                <th>Latest</th>
                <th>Lag</th>
                <th>Lag in time</th>
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
                  <td data-testid="lag-time">{age(p.lagTimeMs)}</td>
                  <td>{p.clientId ?? ''}</td>
                </tr>
              ))}
            </tbody>
          </table>
          {data.partitionCount > data.size && <Pager page={data.page} size={data.size} total={data.partitionCount} go={setPage} />}
        </>
      )}
      <GroupHistory id={id} version={version} />
      <ResetPanel id={id} changed={changed} />
      <UndoPanel id={id} changed={changed} />
    </section>
  );
}
