/** Small pieces every page uses: the error line, a pager, a destructive link button, byte sizes. */
import type { ComponentChildren } from 'preact';

export function ErrorLine({ message }: { message: string | undefined }) {
  return message ? (
    <p class="error" role="alert">
      {message}
    </p>
  ) : null;
}

export function Notice({ children }: { children: ComponentChildren }) {
  return (
    <p class="notice" role="status">
      {children}
    </p>
  );
}

export function Pager({ page, size, total, go }: { page: number; size: number; total: number; go: (page: number) => void }) {
  const pages = Math.max(1, Math.ceil(total / size));
  return (
    <div class="pager">
      <button type="button" disabled={page <= 0} onClick={() => go(page - 1)}>
        ‹ Previous
      </button>
      <span data-testid="page-info">
        page {page + 1} of {pages} ({total})
      </span>
      <button type="button" disabled={page + 1 >= pages} onClick={() => go(page + 1)}>
        Next ›
      </button>
    </div>
  );
}

/** A link-styled button for a destructive action; asks `question` first when given. */
export function DangerLink({ label, question, run }: { label: string; question?: string; run: () => void }) {
  return (
    <button type="button" class="link danger" onClick={() => (question === undefined || confirm(question)) && run()}>
      {label}
    </button>
  );
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

export function bytes(n: string | number | null | undefined): string {
  if (n === null || n === undefined || n === '') return '';
  let v = Number(n);
  if (v < 0) return '';
  let u = 0;
  while (v >= 1024 && u < UNITS.length - 1) {
    v /= 1024;
    u++;
  }
  return `${u === 0 ? v : v.toFixed(1)} ${UNITS[u]}`;
}
