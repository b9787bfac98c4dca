/** The cluster page: brokers and the APIs they serve, the controller, problem partitions, log dirs. */
import { useState } from 'preact/hooks';
import { bytes, ErrorLine } from '../components.js';
import { useApi } from '../hooks.js';

interface ClusterView {
  clusterId: string | null;
  controllerId: number;
  brokers: { nodeId: number; host: string; port: number; rack: string | null; apis: Record<string, string> }[];
  missingBrokers: number[];
  topics: number;
  partitions: number;
  underReplicatedCount: number;
  offlineCount: number;
  underReplicated: { topic: string; partition: number; replicas: number[]; isr: number[] }[];
  offline: { topic: string; partition: number; replicas: number[] }[];
  logDirs: { broker: number; logDir: string; error: number; totalBytes: string; usableBytes: string; partitionBytes: string; partitions: number }[];
}

export function ClusterPage() {
  const { data, error } = useApi<ClusterView>('/cluster', 10_000);
  const [apisOf, setApisOf] = useState<number | undefined>();
  if (!data) return <ErrorLine message={error} />;
  const shownApis = data.brokers.find((b) => b.nodeId === apisOf);
  return (
    <section>
      <h1>Cluster</h1>
      <ErrorLine message={error} />
      <dl class="facts">
        <dt>Cluster id</dt>
        <dd data-testid="cluster-id">{data.clusterId ?? '(none)'}</dd>
        <dt>Controller</dt>
        <dd data-testid="controller">{data.controllerId}</dd>
        <dt>Topics</dt>
        <dd data-testid="topics">{data.topics}</dd>
        <dt>Partitions</dt>
        <dd data-testid="partitions">{data.partitions}</dd>
        <dt>Under-replicated</dt>
        <dd data-testid="under-replicated">{data.underReplicatedCount}</dd>
        <dt>Offline</dt>
        <dd data-testid="offline">{data.offlineCount}</dd>
      </dl>
      <h2>Brokers</h2>
      <table>
        <thead>
          <tr>
            <th>Id</th>
            <th>Host</th>
            <th>Port</th>
            <th>Rack</th>
            <th>APIs</th>
          </tr>
        </thead>
        <tbody>
          {data.brokers.map((b) => (
            <tr key={b.nodeId} data-testid="broker-row">
              <td>
                {b.nodeId}
                {b.nodeId === data.controllerId ? ' (controller)' : ''}
              </td>
              <td>{b.host}</td>
              <td>{b.port}</td>
              <td>{b.rack ?? ''}</td>
              <td>
                <button type="button" class="link" onClick={() => setApisOf(apisOf === b.nodeId ? undefined : b.nodeId)}>
                  {Object.keys(b.apis).length} APIs
                </button>
              </td>
            </tr>
          ))}
          {data.missingBrokers.map((id) => (
            <tr key={`missing-${id}`} class="warn" data-testid="missing-broker-row">
              <td>{id}</td>
              <td colSpan={4}>down: holds replicas, not registered</td>
            </tr>
          ))}
        </tbody>
      </table>
      {shownApis && (
        <table class="compact">
          <caption>API versions of broker {shownApis.nodeId}</caption>
          <tbody>
            {Object.entries(shownApis.apis).map(([name, range]) => (
              <tr key={name}>
                <td>{name}</td>
                <td>{range}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h2>Log dirs</h2>
      <table>
        <thead>
          <tr>
            <th>Broker</th>
            <th>Dir</th>
            <th>Partitions</th>
            <th>Data</th>
            <th>Usable</th>
            <th>Total</th>
          </tr>
        </thead>
        <tbody>
          {data.logDirs.map((d) => (
            <tr key={`${d.broker}:${d.logDir}`} data-testid="logdir-row">
              <td>{d.broker}</td>
              <td>
                {d.logDir}
                {d.error !== 0 ? ` (error ${d.error})` : ''}
              </td>
              <td>{d.partitions}</td>
              <td>{bytes(d.partitionBytes)}</td>
              <td>{bytes(d.usableBytes)}</td>
              <td>{bytes(d.totalBytes)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <ProblemList title="Under-replicated partitions" list={data.underReplicated} />
      <ProblemList title="Offline partitions" list={data.offline} />
    </section>
  );
}

function ProblemList({ title, list }: { title: string; list: { topic: string; partition: number; replicas: number[]; isr?: number[] }[] }) {
  if (list.length === 0) return null;
  return (
    <div>
      <h2>{title}</h2>
      <ul>
        {list.map((p) => (
          <li key={`${p.topic}-${p.partition}`}>
            <a href={`#/topics/${encodeURIComponent(p.topic)}`}>
              {p.topic}-{p.partition}
            </a>{' '}
            replicas {p.replicas.join(',')}
            {p.isr ? `, in sync ${p.isr.join(',')}` : ''}
          </li>
        ))}
      </ul>
    </div>
  );
}
