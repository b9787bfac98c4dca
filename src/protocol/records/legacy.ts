/**
 * Conversions between legacy message sets (magic 0/1) and v2 record batches: up-conversion of
 * what old producers send, down-conversion of what old consumers fetch.
 */
import { ATTR_CONTROL, ATTRIBUTES, CompressionType, LOG_OVERHEAD } from './batch-header.js';
import { DecompressionLimitError, decompressBounded } from './compression/bounded.js';
import { type OpenedBatch, TimestampType, batchRecords, encodeBatch, openBatch, openBatchAsync } from './batch.js';
import { iterateBatches } from './batch-entries.js';
import { RecordsError } from './errors.js';
import { type LegacyMagic, encodeLegacyMessage, readLegacyMessageSet } from './legacy-message.js';
import type { KafkaRecord } from './record.js';

export * from './legacy-message.js';

const ATTR_LOG_APPEND_TIME = 0x08;

export interface ConvertToV2Options {
  /** Codec for the new batch; default: the codec the legacy set used (None if uncompressed). */
  compression?: CompressionType;
  /**
   * Keep the legacy offsets (baseOffset = first offset, deltas relative to it). Default false:
   * offsetDelta = position and baseOffset = 0, since the broker assigns offsets on produce and
   * old producers write placeholders (-1, or 0..n-1 inside wrappers).
   */
  preserveOffsets?: boolean;
}

/**
 * Converts a legacy message set into ONE v2 batch (as Kafka does on produce from old clients).
 * Magic-0 messages get timestamp -1 (NO_TIMESTAMP). Returns an empty buffer when the set holds
 * no complete message. Throws RecordsError on corrupt input.
 */
export function convertLegacyToV2(buf: Buffer, options: ConvertToV2Options = {}): Buffer {
  const { messages, compression } = readLegacyMessageSet(buf);
  const first = messages[0];
  if (first === undefined) return Buffer.alloc(0);
  const baseOffset = options.preserveOffsets ? first.offset : 0n;
  const baseTimestamp = first.timestamp;
  let maxTimestamp = baseTimestamp;
  let logAppendTime = false;
  const records: KafkaRecord[] = messages.map((m, i) => {
    if (m.timestamp > maxTimestamp) maxTimestamp = m.timestamp;
    if (m.timestampType === TimestampType.LogAppendTime) logAppendTime = true;
    const offsetDelta = options.preserveOffsets ? Number(m.offset - baseOffset) : i;
    const timestampDelta = Number(m.timestamp - baseTimestamp);
    if (!Number.isSafeInteger(timestampDelta) || !Number.isSafeInteger(offsetDelta) || offsetDelta < 0 || offsetDelta > 0x7fffffff) {
      throw new RecordsError('bad_record', `legacy message ${i} has an offset or timestamp out of range`);
    }
    return { attributes: 0, timestampDelta, offsetDelta, key: m.key, value: m.value, headers: [] };
  });
  return encodeBatch({
    records,
    baseOffset,
    compression: options.compression ?? compression,
    timestampType: logAppendTime ? TimestampType.LogAppendTime : TimestampType.CreateTime,
    baseTimestamp,
    maxTimestamp,
  });
}

/** Bytes of one legacy entry (offset + size prefix included) at `magic`. */
function legacyEntrySize(magic: LegacyMagic, key: Buffer | null, value: Buffer | null): number {
  return LOG_OVERHEAD + 4 + 1 + 1 + (magic === 1 ? 8 : 0) + 4 + (key?.length ?? 0) + 4 + (value?.length ?? 0);
}

export interface DownConvertLimits {
  /**
   * Budget for the converted bytes (the partition's share of the fetch's max_bytes and its
   * partition max_bytes): conversion stops before the message that would pass it.
   */
  maxOutputBytes: number;
  /**
   * Emit the first message whole even when it alone is over maxOutputBytes, so a consumer can
   * always make progress (Kafka's lazy down-conversion sends the first converted batch whole).
   * Default true; false for a partition after the response's first data.
   */
  firstMessageWhole?: boolean;
  /** Cap on one batch's inflated records section (see readDecompressionCap). */
  maxDecompressedBytes: number;
  /**
   * The fetch offset: records below it (the head of the batch that holds it) are left out, as
   * Kafka's down-conversion does, so they neither use the budget nor make a consumer that
   * drops them fetch the same offset again. Default: keep everything.
   */
  fromOffset?: bigint;
}

export interface DownConverted {
  /** Legacy entries, uncompressed, complete messages only. */
  records: Buffer;
  /**
   * Why conversion stopped early at a batch it could not decode (corrupt, or inflating past the
   * cap). Entries before that batch are in `records`; when `records` is empty the caller has
   * nothing to send and answers this error for the partition.
   */
  error?: RecordsError;
  /** Offset of the first batch that could not be converted, with `error`. */
  errorOffset?: bigint;
}

const LEGACY_ATTRIBUTES = 17;
const LEGACY_CODEC_MASK = 0x07;

/**
 * For a compressed legacy wrapper (one entry whose value holds the inner messages): a
 * RecordsError when its value does not inflate within `maxBytes`, undefined otherwise (also
 * for uncompressed entries, and for malformed ones, which the legacy reader reports itself).
 */
function legacyWrapperOverCap(entry: Buffer, maxBytes: number): RecordsError | undefined {
  if (entry.length <= LEGACY_ATTRIBUTES) return undefined;
  const codec = entry[LEGACY_ATTRIBUTES]! & LEGACY_CODEC_MASK;
  if (codec === CompressionType.None || codec > CompressionType.Zstd) return undefined;
  let pos = LEGACY_ATTRIBUTES + 1 + (entry.readInt8(16) === 1 ? 8 : 0);
  if (pos + 4 > entry.length) return undefined;
  const keyLen = entry.readInt32BE(pos);
  pos += 4 + Math.max(0, keyLen);
  if (pos + 4 > entry.length) return undefined;
  const valueLen = entry.readInt32BE(pos);
  pos += 4;
  if (valueLen < 0 || pos + valueLen > entry.length) return undefined;
  try {
    decompressBounded(codec as CompressionType, entry.subarray(pos, pos + valueLen), maxBytes);
  } catch (err) {
    if (err instanceof DecompressionLimitError) return new RecordsError('decompressed_too_large', `legacy wrapper: ${err.message}`);
  }
  return undefined;
}

/** What the conversion core asks its driver for: a batch opened within the cap, or a pause. */
type Need = { open: number } | { tick: true };

/** Records converted between two pauses: an upper bound on one slice of event-loop time. */
const RECORDS_PER_TICK = 256;

/**
 * The conversion, written once for the sync and async drivers: yields `{open}` to have the batch
 * at that position inflated (the driver sends back the view, or throws the RecordsError into
 * the generator) and `{tick}` every few hundred records so the async driver can yield.
 */
function* convertCore(buf: Buffer, toMagic: LegacyMagic, limits: DownConvertLimits): Generator<Need, DownConverted, OpenedBatch | undefined> {
  const out: Buffer[] = [];
  let size = 0;
  let firstWhole = limits.firstMessageWhole ?? true;
  const fromOffset = limits.fromOffset ?? -1n;
  const fits = (bytes: number): boolean => {
    if (size + bytes <= limits.maxOutputBytes) return true;
    return size === 0 && firstWhole;
  };
  const push = (b: Buffer): void => {
    out.push(b);
    size += b.length;
    firstWhole = false;
  };
  const done = (extra: Partial<DownConverted> = {}): DownConverted => ({ records: out.length === 1 ? out[0]! : Buffer.concat(out, size), ...extra });

  try {
    for (const entry of iterateBatches(buf)) {
      const bytes = buf.subarray(entry.start, entry.start + entry.size);
      if (entry.magic <= toMagic) {
        if (!fits(bytes.length)) return done();
        push(bytes);
        continue;
      }
      if (entry.magic !== 2) {
        // A compressed magic-1 wrapper lowered to magic 0: check that it inflates within the cap
        // before the legacy reader (which has no cap of its own) expands it.
        const tooBig = legacyWrapperOverCap(bytes, limits.maxDecompressedBytes);
        if (tooBig) return done({ error: tooBig, errorOffset: buf.readBigInt64BE(entry.start) });
        let messages: ReturnType<typeof readLegacyMessageSet>['messages'];
        try {
          messages = readLegacyMessageSet(bytes, { verifyCrc: false }).messages;
        } catch (err) {
          if (!(err instanceof RecordsError)) throw err;
          return done({ error: err, errorOffset: buf.readBigInt64BE(entry.start) });
        }
        for (const m of messages) {
          if (m.offset < fromOffset) continue;
          if (!fits(legacyEntrySize(toMagic, m.key, m.value))) return done();
          push(encodeLegacyMessage(toMagic, m.offset, 0, m.timestamp, m.key, m.value));
        }
        continue;
      }
      // Control batches are dropped: their header is enough, no need to inflate them.
      if ((buf.readInt16BE(entry.start + ATTRIBUTES) & ATTR_CONTROL) !== 0) continue;
      let batch: OpenedBatch;
      try {
        batch = (yield { open: entry.start })!;
      } catch (err) {
        if (!(err instanceof RecordsError)) throw err;
        return done({ error: err, errorOffset: buf.readBigInt64BE(entry.start) });
      }
      const logAppend = batch.timestampType === TimestampType.LogAppendTime;
      const attributes = toMagic === 1 && logAppend ? ATTR_LOG_APPEND_TIME : 0;
      let n = 0;
      try {
        for (const r of batchRecords(batch)) {
          if (++n % RECORDS_PER_TICK === 0) yield { tick: true };
          const offset = batch.baseOffset + BigInt(r.offsetDelta);
          if (offset < fromOffset) continue;
          if (!fits(legacyEntrySize(toMagic, r.key, r.value))) return done();
          const timestamp = logAppend ? batch.maxTimestamp : batch.baseTimestamp + BigInt(r.timestampDelta);
          push(encodeLegacyMessage(toMagic, offset, attributes, timestamp, r.key, r.value));
        }
      } catch (err) {
        // A malformed record: stop here; what was converted before it is still sent.
        if (!(err instanceof RecordsError)) throw err;
        return done({ error: err, errorOffset: batch.baseOffset });
      }
      yield { tick: true };
    }
  } catch (err) {
    // Framing damage between entries (a size below the minimum, an unknown magic).
    if (!(err instanceof RecordsError)) throw err;
    return done({ error: err });
  }
  return done();
}

/**
 * Converts fetched log data (v2 batches, possibly mixed with legacy entries) for a client that
 * only understands `toMagic`, within `limits`: output bytes (the first message whole when
 * allowed) and each batch's inflated size. Output is uncompressed; entries already at or below
 * `toMagic` are copied unchanged. Control batches are dropped (old clients know nothing of
 * transactions) and headers are lost. A partial trailing batch is ignored, as in Kafka.
 * Synchronous: for tools and tests; the broker uses downConvertAsync.
 */
export function downConvert(v2Batches: Buffer, toMagic: LegacyMagic, limits: DownConvertLimits): DownConverted {
  const core = convertCore(v2Batches, toMagic, limits);
  const opts = { verifyCrc: false, maxBytes: limits.maxDecompressedBytes };
  let step = core.next();
  while (!step.done) {
    const need = step.value;
    if ('open' in need) {
      let view: OpenedBatch;
      try {
        view = openBatch(v2Batches, need.open, opts);
      } catch (err) {
        step = core.throw(err);
        continue;
      }
      step = core.next(view);
    } else step = core.next();
  }
  return step.value;
}

/** Longest run of conversion work between two yields to the event loop. */
const SLICE_MS = 4;

/**
 * As downConvert, for the broker: batches inflate off the event loop (openBatchAsync) and the
 * per-record work yields to the loop every SLICE_MS, so a client beside a large conversion
 * keeps being served.
 */
export async function downConvertAsync(v2Batches: Buffer, toMagic: LegacyMagic, limits: DownConvertLimits): Promise<DownConverted> {
  const core = convertCore(v2Batches, toMagic, limits);
  // Data comes from our own log, already validated on append: skip the CRC pass.
  const opts = { verifyCrc: false, maxBytes: limits.maxDecompressedBytes };
  let sliceStart = performance.now();
  let step = core.next();
  while (!step.done) {
    const need = step.value;
    if ('open' in need) {
      let view: OpenedBatch;
      try {
        view = await openBatchAsync(v2Batches, need.open, opts);
      } catch (err) {
        step = core.throw(err);
        continue;
      }
      sliceStart = performance.now();
      step = core.next(view);
    } else {
      if (performance.now() - sliceStart >= SLICE_MS) {
        await new Promise<void>((resolve) => setImmediate(resolve));
        sliceStart = performance.now();
      }
      step = core.next();
    }
  }
  return step.value;
}
