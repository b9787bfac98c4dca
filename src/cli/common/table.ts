/**
 * Kafka's column tables: every column left-aligned and as wide as its longest cell, separated
 * by one space, the last column unpadded.
 */
export function formatTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join(' ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}
