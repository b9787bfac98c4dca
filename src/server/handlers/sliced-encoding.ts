/**
 * Encoding a large answer in slices. The generated codec writes a whole response in one go,
 * about 100 MB/s: a 30 MB DescribeConfigs answer would hold the event loop ~300 ms. When most of
 * a response is one top-level array (Metadata's topics, DescribeConfigs' results, ...), its items
 * are encoded a chunk at a time instead, each chunk as the whole response holding just those
 * items, with a pause for the loop between chunks. The items' bytes are cut out of each chunk's
 * encoding: a response with no item and one with k items differ only in the array's length and,
 * after it, the items themselves; everything before and after the array is the same bytes.
 */
import { Writer, type Input, type MessageCodec } from '../../protocol/primitives/index.js';
import { LoopSlicer } from '../../common/slices.js';

/** Arrays this short are encoded in one go with the rest. */
export const SLICED_ENCODING_MIN_ITEMS = 64;

/** Aim of one chunk's encoding time, in ms. */
const CHUNK_MS = 2;

/** Whether `res`'s array `field` is long enough to be worth encoding in slices. */
export function worthSlicing(res: unknown, field: string | undefined): field is string {
  if (field === undefined) return false;
  const items = (res as Record<string, unknown>)[field];
  return Array.isArray(items) && items.length > SLICED_ENCODING_MIN_ITEMS;
}

function encode<Res>(codec: MessageCodec<Res>, res: Input<Res>, version: number): Buffer {
  const w = new Writer(1024);
  codec.write(w, res, version);
  return w.result();
}

function lengthBytes(n: number, flexible: boolean): Buffer {
  const w = new Writer(8);
  w.arrayLength(n, flexible);
  return w.result();
}

function commonPrefix(a: Buffer, b: Buffer): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/**
 * Encodes `res` with its array `field` in slices; returns the writer of the finished body. Falls
 * back to one encoding when the layout is not as expected (it always is for a top-level array).
 */
export async function encodeInSlices<Res>(
  codec: MessageCodec<Res>,
  res: Input<Res>,
  field: keyof Res & string,
  version: number,
  slicer = new LoopSlicer(),
): Promise<(w: Writer) => void> {
  const items = (res as Record<string, unknown>)[field];
  const whole = (w: Writer): void => codec.write(w, res, version);
  if (!Array.isArray(items) || items.length === 0) return whole;
  const flexible = version >= codec.flexibleFrom;
  const withItems = (part: unknown[]): Buffer => encode(codec, { ...(res as object), [field]: part } as Input<Res>, version);
  // Where the array starts: the empty and the one-item encodings first differ inside its length.
  const empty = withItems([]);
  const one = withItems(items.slice(0, 1));
  const len0 = lengthBytes(0, flexible);
  const start = commonPrefix(empty, one) - commonPrefix(len0, lengthBytes(1, flexible));
  const tail = empty.length - start - len0.length;
  if (start < 0 || tail < 0 || !empty.subarray(start, start + len0.length).equals(len0)) return whole;
  const chunks: Buffer[] = [];
  let chunk = 16;
  for (let i = 0; i < items.length; ) {
    const part = items.slice(i, i + chunk);
    const t0 = performance.now();
    const bytes = withItems(part);
    const took = performance.now() - t0;
    chunks.push(Buffer.from(bytes.subarray(start + lengthBytes(part.length, flexible).length, bytes.length - tail)));
    i += part.length;
    // Next chunk sized to take about CHUNK_MS, whatever one item costs.
    chunk = Math.max(1, Math.min(chunk * 4, Math.floor((part.length * CHUNK_MS) / Math.max(took, 0.01))));
    if (slicer.due()) await slicer.pause();
  }
  const before = Buffer.from(empty.subarray(0, start));
  const after = Buffer.from(empty.subarray(empty.length - tail));
  return (w) => {
    w.raw(before);
    w.arrayLength(items.length, flexible);
    for (const c of chunks) w.raw(c);
    w.raw(after);
  };
}
