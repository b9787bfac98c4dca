/**
 * The topics pages: the list (search and paging done by the server) with the create form, and
 * one topic: its partitions a page at a time, its configs (set, reset to default), more
 * partitions, delete. A broker's refusal is shown with the broker's message.
 */
import { useState } from 'preact/hooks';
import { api, query, seg } from '../api.js';
import { bytes, ErrorLine, Notice, Pager } from '../components.js';
import { navigate, useApi, type Route } from '../hooks.js';

interface TopicList {
  total: number;
  page: number;
  size: number;
  topics: { name: string; internal: boolean; partitions: number; replicationFactor: number; underReplicated: number }[];
}

export function TopicsPage({ route }: { route: Route }) {
  const search = route.params.get('search') ?? '';
  const page = Number(route.params.get('page') ?? 0);
  const { data, error, reload } = useApi<TopicList>(`/topics${query({ search, page, size: 50 })}`);
  const go = (s: string, p: number) => navigate(`/topics${query({ search: s, page: p || undefined })}`);
  return (
    <section>
      <h1>Topics</h1>
      <input type="search" placeholder="Search topics" aria-label="Search topics" value={search} onInput={(e) => go(e.currentTarget.value, 0)} />
      <ErrorLine message={error} />
      {data && (
        <>
          <table>
            <thead>
              <tr>
                <th>Name</th>
                <th>Partitions</th>
                <th>Replication</th>
                <th>Under-replicated</th>
              </tr>
            </thead>
            <tbody>
              {data.topics.map((t) => (
                <tr key={t.name} data-testid="topic-row">
                  <td>
                    <a href={`#/topics/${seg(t.name)}`}>{t.name}</a>
                    {t.internal ? ' (internal)' : ''}
                  </td>
                  <td>{t.partitions}</td>
                  <td>{t.replicationFactor}</td>
                  <td>{t.underReplicated}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <Pager page={data.page} size={data.size} total={data.total} go={(p) => go(search, p)} />
        </>
      )}
      <CreateTopic created={reload} />
    </section>
  );
}

function CreateTopic({ created }: { created: () => void }) {
  const [name, setName] = useState('');
  const [partitions, setPartitions] = useState('1');
  const [replication, setReplication] = useState('');
  const [error, setError] = useState<string>();
  const [done, setDone] = useState<string>();
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setDone(undefined);
    try {
      await api('/topics', { method: 'POST', body: { name, partitions: partitions || undefined, replicationFactor: replication || undefined } });
      setDone(`Created topic ${name}`);
      setName('');
      created();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <form class="panel" onSubmit={submit} aria-label="Create topic">
      <h2>Create topic</h2>
      <label>
        Name <input name="name" value={name} onInput={(e) => setName(e.currentTarget.value)} required />
      </label>
      <label>
        Partitions <input name="partitions" type="number" min="1" value={partitions} onInput={(e) => setPartitions(e.currentTarget.value)} />
      </label>
      <label>
        Replication factor{' '}
        <input
          name="replicationFactor"
          type="number"
          min="1"
          placeholder="default"
          value={replication}
          onInput={(e) => setReplication(e.currentTarget.value)}
        />
      </label>
      <button type="submit">Create</button>
      <ErrorLine message={error} />
      {done && <Notice>{done}</Notice>}
    </form>
  );
}

interface TopicView {
  name: string;
  topicId: string;
  internal: boolean;
  partitionCount: number;
  page: number;
  size: number;
  partitions: {
    partition: number;
    leader: number;
    replicas: number[];
    isr: number[];
    offline: number[];
    earliest: string;
    latest: string;
    size: string | null;
  }[];
}

interface ConfigRow {
  name: string;
  value: string | null;
  isDefault: boolean;
  readOnly: boolean;
  sensitive: boolean;
}

/** Partitions per page of a topic: a topic of 10,000 shows (and the server reads) 100 at a time. */
const PARTITIONS_PER_PAGE = 100;

export function TopicPage({ name, route }: { name: string; route: Route }) {
  const page = Number(route.params.get('page') ?? 0);
  const found = route.params.get('partition');
  const { data, error, reload } = useApi<TopicView>(`/topics/${seg(name)}${query({ page, size: PARTITIONS_PER_PAGE })}`);
  const [actionError, setActionError] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const [count, setCount] = useState('');
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
  const remove = () => {
    if (!confirm(`Delete topic ${name} and all its messages?`)) return;
    api(`/topics/${seg(name)}`, { method: 'DELETE' }).then(
      () => navigate('/topics'),
      (err: Error) => setActionError(err.message),
    );
  };
  return (
    <section>
      <h1>
        Topic <span data-testid="topic-name">{name}</span>
      </h1>
      <ErrorLine message={error} />
      {data && (
        <>
          <p>
            <a href={`#/topics/${seg(name)}/messages`}>Messages</a> · id {data.topicId} · {data.partitionCount} partitions
          </p>
          <table>
            <thead>
              <tr>
                <th>Partition</th>
                <th>Leader</th>
                <th>Replicas</th>
                <th>In sync</th>
                <th>Earliest</th>
                <th>Latest</th>
                <th>Size</th>
              </tr>
            </thead>
            <tbody>
              {data.partitions.map((p) => (
                <tr
                  key={p.partition}
                  data-testid="partition-row"
                  class={`${p.isr.length < p.replicas.length ? 'warn' : ''}${String(p.partition) === found ? ' found' : ''}`}
                >
                  <td>
                    <a href={`#/topics/${seg(name)}/messages${query({ partition: p.partition })}`}>{p.partition}</a>
                  </td>
                  <td>{p.leader < 0 ? 'none' : p.leader}</td>
                  <td>{p.replicas.join(', ')}</td>
                  <td>{p.isr.join(', ')}</td>
                  <td>{p.earliest}</td>
                  <td data-testid="latest-offset">{p.latest}</td>
                  <td>{bytes(p.size)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <Pager page={data.page} size={data.size} total={data.partitionCount} go={(p) => navigate(`/topics/${seg(name)}${query({ page: p || undefined })}`)} />
          <GoToPartition topic={name} count={data.partitionCount} />
          <div class="panel">
            <h2>Change</h2>
            <form
              onSubmit={(e) => {
                e.preventDefault();
                act(() => api(`/topics/${seg(name)}/partitions`, { method: 'POST', body: { count: Number(count) } }), `${name} now has ${count} partitions`);
              }}
            >
              <label>
                Partition count <input name="count" type="number" min="1" value={count} onInput={(e) => setCount(e.currentTarget.value)} required />
              </label>
              <button type="submit">Add partitions</button>
            </form>
            <button type="button" class="danger" onClick={remove}>
              Delete topic
            </button>
            <ErrorLine message={actionError} />
            {notice && <Notice>{notice}</Notice>}
          </div>
          <Configs name={name} />
        </>
      )}
    </section>
  );
}

/** Jumps to the page holding partition N (partitions are numbered 0..count-1), the row marked. */
function GoToPartition({ topic, count }: { topic: string; count: number }) {
  const [wanted, setWanted] = useState('');
  const [error, setError] = useState<string>();
  const go = (e: Event) => {
    e.preventDefault();
    const n = Number(wanted);
    if (!/^\d+$/.test(wanted) || n >= count) {
      setError(`no partition ${wanted} in ${topic}: it has partitions 0 to ${count - 1}`);
      return;
    }
    setError(undefined);
    navigate(`/topics/${seg(topic)}${query({ page: Math.floor(n / PARTITIONS_PER_PAGE) || undefined, partition: n })}`);
  };
  return (
    <form class="pager" onSubmit={go} aria-label="Go to partition">
      <label>
        Go to partition <input name="partition" type="number" min="0" value={wanted} onInput={(e) => setWanted(e.currentTarget.value)} required />
      </label>
      <button type="submit">Go</button>
      <ErrorLine message={error} />
    </form>
  );
}

function Configs({ name }: { name: string }) {
  const { data, error, reload } = useApi<ConfigRow[]>(`/topics/${seg(name)}/configs`);
  const [key, setKey] = useState('');
  const [value, setValue] = useState('');
  const [changeError, setChangeError] = useState<string>();
  const change = async (body: { set?: Record<string, string>; delete?: string[] }) => {
    setChangeError(undefined);
    try {
      await api(`/topics/${seg(name)}/configs`, { method: 'PUT', body });
      reload();
    } catch (err) {
      setChangeError((err as Error).message);
    }
  };
  return (
    <div class="panel">
      <h2>Configs</h2>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          change({ set: { [key]: value } });
        }}
        aria-label="Set config"
      >
        <label>
          Config <input name="config" list="config-names" value={key} onInput={(e) => setKey(e.currentTarget.value)} required />
        </label>
        <label>
          Value <input name="value" value={value} onInput={(e) => setValue(e.currentTarget.value)} />
        </label>
        <button type="submit">Set</button>
        <datalist id="config-names">
          {data?.map((c) => (
            <option key={c.name} value={c.name} />
          ))}
        </datalist>
      </form>
      <ErrorLine message={changeError ?? error} />
      <table class="compact">
        <tbody>
          {data?.map((c) => (
            <tr key={c.name} class={c.isDefault ? 'default' : 'set'} data-testid="config-row">
              <td>{c.name}</td>
              <td>{c.sensitive ? '(sensitive)' : (c.value ?? '')}</td>
              <td>
                {!c.isDefault && !c.readOnly && (
                  <button type="button" class="link" onClick={() => change({ delete: [c.name] })}>
                    reset
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
