/**
 * The messages page: one partition browsed from its newest records, an offset or a time, with a
 * text filter; each record's key, value, headers and timestamp as the server shaped them (JSON
 * pretty, text, binary as hex, long values cut with a notice); and a form to produce a test
 * message. The browse's settings live in the address, so a view can be linked and reloaded.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, query, seg } from '../api.js';
import { ErrorLine, Notice } from '../components.js';
import { navigate, useApi, type Route } from '../hooks.js';

interface Shown {
  kind: 'null' | 'json' | 'text' | 'binary';
  text: string;
  size: number;
  truncated: boolean;
}

interface Browse {
  earliest: string;
  latest: string;
  start: string;
  next: string;
  scanned: number;
  notice?: string;
  records: { offset: string; timestamp: string; timestampType: string; key: Shown; value: Shown; headers: { key: string; value: Shown }[] }[];
}

function Bytes({ shown, label }: { shown: Shown; label: string }) {
  if (shown.kind === 'null') return <span class="null">null</span>;
  return (
    <div class={`bytes ${shown.kind}`} data-kind={shown.kind} data-part={label}>
      {shown.kind === 'json' ? <pre>{shown.text}</pre> : <span>{shown.text}</span>}
      {shown.truncated && (
        <div class="truncated" role="note">
          truncated: showing part of {shown.size} bytes
        </div>
      )}
    </div>
  );
}

export function MessagesPage({ topic, route }: { topic: string; route: Route }) {
  const p = route.params;
  const partition = p.get('partition') ?? '0';
  const from = p.get('from') ?? 'newest';
  const at = p.get('at') ?? '';
  const filter = p.get('filter') ?? '';
  const apiPath = `/topics/${seg(topic)}/partitions/${seg(partition)}/messages${query({
    offset: from === 'offset' ? at : undefined,
    time: from === 'time' ? at : undefined,
    filter,
    limit: 50,
  })}`;
  const { data, error, reload } = useApi<Browse>(/^\d+$/.test(partition) ? apiPath : undefined);
  const [form, setForm] = useState({ partition, from, at, filter });
  // A new address (a link, the back button) puts its settings in the form.
  useEffect(() => setForm({ partition, from, at, filter }), [partition, from, at, filter]);
  const show = (e: Event) => {
    e.preventDefault();
    navigate(
      `/topics/${seg(topic)}/messages${query({ partition: form.partition, from: form.from, at: form.from === 'newest' ? undefined : form.at, filter: form.filter })}`,
    );
    reload();
  };
  return (
    <section>
      <h1>
        Messages of <a href={`#/topics/${seg(topic)}`}>{topic}</a>
      </h1>
      <form class="panel" onSubmit={show} aria-label="Browse">
        <label>
          Partition{' '}
          <input name="partition" type="number" min="0" value={form.partition} onInput={(e) => setForm({ ...form, partition: e.currentTarget.value })} />
        </label>
        <label>
          From{' '}
          <select name="from" aria-label="From" value={form.from} onChange={(e) => setForm({ ...form, from: e.currentTarget.value })}>
            <option value="newest">newest first</option>
            <option value="offset">offset</option>
            <option value="time">time</option>
          </select>
        </label>
        {form.from !== 'newest' && (
          <label>
            {form.from === 'offset' ? 'Offset' : 'Time'}{' '}
            <input
              name="at"
              value={form.at}
              placeholder={form.from === 'offset' ? '0' : '2026-12-05T09:00:00Z'}
              onInput={(e) => setForm({ ...form, at: e.currentTarget.value })}
            />
          </label>
        )}
        <label>
          Filter{' '}
          <input
            name="filter"
            type="search"
            value={form.filter}
            placeholder="text in key, value or headers"
            onInput={(e) => setForm({ ...form, filter: e.currentTarget.value })}
          />
        </label>
        <button type="submit">Show</button>
      </form>
      <ErrorLine message={error} />
      {data && (
        <>
          <p class="meta" data-testid="browse-meta">
            offsets {data.earliest}–{data.latest}; shown from {data.start}, {data.records.length} records
            {from !== 'newest' && data.next !== data.latest && (
              <>
                {' '}
                ·{' '}
                <a href={`#/topics/${seg(topic)}/messages${query({ partition, from: 'offset', at: data.next, filter })}`} data-testid="next-page">
                  next from {data.next}
                </a>
              </>
            )}
          </p>
          {data.notice && <Notice>{data.notice}</Notice>}
          {data.records.length === 0 && !data.notice && <Notice>No messages here.</Notice>}
          <table class="messages">
            <thead>
              <tr>
                <th>Offset</th>
                <th>Timestamp</th>
                <th>Key</th>
                <th>Value</th>
                <th>Headers</th>
              </tr>
            </thead>
            <tbody>
              {data.records.map((r) => (
                <tr key={r.offset} data-testid="message-row" data-offset={r.offset}>
                  <td>{r.offset}</td>
                  <td title={r.timestampType}>{new Date(Number(r.timestamp)).toISOString()}</td>
                  <td>
                    <Bytes shown={r.key} label="key" />
                  </td>
                  <td>
                    <Bytes shown={r.value} label="value" />
                  </td>
                  <td>
                    {r.headers.map((h) => (
                      <div key={h.key}>
                        <b>{h.key}</b>: <Bytes shown={h.value} label={`header ${h.key}`} />
                      </div>
                    ))}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
      <Produce topic={topic} partition={partition} produced={reload} />
    </section>
  );
}

/** Headers typed one per line as name=value. */
function parseHeaders(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\n')) {
    const eq = line.indexOf('=');
    if (line.trim() !== '') out[(eq < 0 ? line : line.slice(0, eq)).trim()] = eq < 0 ? '' : line.slice(eq + 1);
  }
  return out;
}

function Produce({ topic, partition, produced }: { topic: string; partition: string; produced: () => void }) {
  const [key, setKey] = useState('');
  const [value, setValue] = useState('');
  const [headers, setHeaders] = useState('');
  const [error, setError] = useState<string>();
  const [done, setDone] = useState<string>();
  const submit = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setDone(undefined);
    try {
      const r = await api<{ partition: number; offset: string }>(`/topics/${seg(topic)}/messages`, {
        method: 'POST',
        body: { partition: Number(partition), key: key === '' ? null : key, value, headers: parseHeaders(headers) },
      });
      setDone(`Produced to partition ${r.partition} at offset ${r.offset}`);
      produced();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return (
    <form class="panel" onSubmit={submit} aria-label="Produce">
      <h2>Produce a test message to partition {partition}</h2>
      <label>
        Key <input name="key" value={key} onInput={(e) => setKey(e.currentTarget.value)} />
      </label>
      <label class="wide">
        Value <textarea name="value" rows={3} value={value} onInput={(e) => setValue(e.currentTarget.value)} />
      </label>
      <label class="wide">
        Headers (name=value per line) <textarea name="headers" rows={2} value={headers} onInput={(e) => setHeaders(e.currentTarget.value)} />
      </label>
      <button type="submit">Produce</button>
      <ErrorLine message={error} />
      {done && <Notice>{done}</Notice>}
    </form>
  );
}
