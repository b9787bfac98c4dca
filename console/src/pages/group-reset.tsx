/**
 * Changing a group's committed offsets from its page: a reset (to the earliest or latest offset,
 * to a time, or shifted by N) and an undo of the last reset (or back to a time) from the offset
 * history. Each one is previewed first (the server's dry run: the plan, nothing written); the
 * preview's Execute button sends the same request for real. The server refuses to execute while
 * the group has members, in Kafka's words, shown here as it says them.
 */
import { useState } from 'preact/hooks';
import { api, seg } from '../api.js';
import { ErrorLine, Notice } from '../components.js';

interface PlanRow {
  topic: string;
  partition: number;
  current: string | null;
  offset: string;
  note?: string;
}

interface PlanAnswer {
  executed: boolean;
  rows: PlanRow[];
  skipped?: string[];
  warnings?: string[];
}

/** Rows a plan shows: a reset of a group on 10,000 partitions lists the first ones and a count. */
const MAX_PLAN_ROWS = 100;

function PlanTable({ rows }: { rows: PlanRow[] }) {
  return (
    <>
      <table>
        <thead>
          <tr>
            <th>Topic</th>
            <th>Partition</th>
            <th>Committed now</th>
            <th>New offset</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {rows.slice(0, MAX_PLAN_ROWS).map((r) => (
            <tr key={`${r.topic}-${r.partition}`} data-testid="plan-row" data-partition={`${r.topic}-${r.partition}`}>
              <td>{r.topic}</td>
              <td>{r.partition}</td>
              <td>{r.current ?? '-'}</td>
              <td data-testid="plan-offset">{r.offset}</td>
              <td>{r.note ?? ''}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {rows.length > MAX_PLAN_ROWS && <Notice>and {rows.length - MAX_PLAN_ROWS} more partitions, not listed here</Notice>}
    </>
  );
}

/** A preview, then its execution: `body` is what both send (execute false, then true). */
function usePlan(path: string, changed: () => void) {
  const [preview, setPreview] = useState<{ body: Record<string, unknown>; answer: PlanAnswer }>();
  const [error, setError] = useState<string>();
  const [done, setDone] = useState<string>();
  const send = async (body: Record<string, unknown>, execute: boolean) => {
    setError(undefined);
    setDone(undefined);
    try {
      const answer = await api<PlanAnswer>(path, { method: 'POST', body: { ...body, execute } });
      if (execute) {
        setPreview(undefined);
        setDone(answer.executed ? `Done: ${answer.rows.length} partition(s) moved` : 'Nothing to change');
        changed();
      } else setPreview({ body, answer });
    } catch (err) {
      setError((err as Error).message);
    }
  };
  return { preview, error, done, send };
}

function PlanResult({ plan, action }: { plan: ReturnType<typeof usePlan>; action: string }) {
  const { preview, error, done, send } = plan;
  return (
    <>
      <ErrorLine message={error} />
      {done && <Notice>{done}</Notice>}
      {preview && (
        <div data-testid="preview">
          <p>Preview (nothing changed yet):</p>
          {preview.answer.rows.length > 0 ? <PlanTable rows={preview.answer.rows} /> : <p>No partition to change.</p>}
          {[...(preview.answer.skipped ?? []), ...(preview.answer.warnings ?? [])].map((line) => (
            <p class="notice" key={line}>
              {line}
            </p>
          ))}
          {preview.answer.rows.length > 0 && (
            <button type="button" onClick={() => void send(preview.body, true)}>
              {action}
            </button>
          )}
        </div>
      )}
    </>
  );
}

export function ResetPanel({ id, changed }: { id: string; changed: () => void }) {
  const [to, setTo] = useState('earliest');
  const [time, setTime] = useState('');
  const [shift, setShift] = useState('');
  const [topic, setTopic] = useState('');
  const plan = usePlan(`/groups/${seg(id)}/reset`, changed);
  const submit = (e: Event) => {
    e.preventDefault();
    void plan.send({ to, topic: topic || undefined, time: to === 'time' ? time : undefined, shift: to === 'shift' ? shift : undefined }, false);
  };
  return (
    <form class="panel" onSubmit={submit} aria-label="Reset offsets">
      <h2>Reset offsets</h2>
      <label>
        To{' '}
        <select value={to} onChange={(e) => setTo(e.currentTarget.value)}>
          <option value="earliest">earliest</option>
          <option value="latest">latest</option>
          <option value="time">a time</option>
          <option value="shift">shift by</option>
        </select>
      </label>
      {to === 'time' && (
        <label>
          Time <input value={time} placeholder="2026-12-05T09:00:00Z" onInput={(e) => setTime(e.currentTarget.value)} required />
        </label>
      )}
      {to === 'shift' && (
        <label>
          Shift <input type="number" value={shift} placeholder="-100" onInput={(e) => setShift(e.currentTarget.value)} required />
        </label>
      )}
      <label>
        Topic <input value={topic} placeholder="all the group's topics" onInput={(e) => setTopic(e.currentTarget.value)} />
      </label>
      <button type="submit">Preview reset</button>
      <PlanResult plan={plan} action="Execute reset" />
    </form>
  );
}

export function UndoPanel({ id, changed }: { id: string; changed: () => void }) {
  const [time, setTime] = useState('');
  const plan = usePlan(`/groups/${seg(id)}/undo`, changed);
  const submit = (e: Event) => {
    e.preventDefault();
    void plan.send({ time: time || undefined }, false);
  };
  return (
    <form class="panel" onSubmit={submit} aria-label="Undo reset">
      <h2>Undo a reset</h2>
      <label>
        Back to time <input value={time} placeholder="empty: before the last reset" onInput={(e) => setTime(e.currentTarget.value)} />
      </label>
      <button type="submit">Preview undo</button>
      <PlanResult plan={plan} action="Execute undo" />
    </form>
  );
}
