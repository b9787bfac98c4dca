/**
 * Loading a partition directory at start-up: finishing or discarding interrupted cleaner swaps,
 * removing leftovers, and validating every batch past the recovery point after an unclean
 * shutdown. A torn or corrupt tail is truncated and logged with file, position and size.
 */
import { readdir, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import { isCompacted, type LogConfig } from '../config.js';
import { errnoOf } from '../errors.js';
import type { StorageLogger } from '../logger.js';
import { segmentFileEndOffset, swapFileProblem } from './swap-validation.js';
import { LogSegment } from '../segment/log-segment.js';
import {
  CLEANED_SUFFIX,
  DELETED_SUFFIX,
  INDEX_SUFFIX,
  LOG_SUFFIX,
  SWAP_SUFFIX,
  TIME_INDEX_SUFFIX,
  TXN_INDEX_SUFFIX,
  baseOffsetOfFileName,
  segmentFileName,
} from '../segment/segment-names.js';

export interface LoadOptions {
  recoveryPoint: number;
  hadCleanShutdown: boolean;
  logger: StorageLogger;
  now: number;
}

export interface LoadedLog {
  segments: LogSegment[];
  /** Offset after the last batch of the last segment. */
  nextOffset: number;
}

async function removeQuietly(file: string): Promise<void> {
  await unlink(file).catch(() => undefined);
}

/**
 * Completes swaps whose log file reached `.swap` (the commit point) and validates in full;
 * discards the rest. Returns the base offsets whose segment must be validated in full.
 */
async function settleSwaps(dir: string, names: string[], maxBatchBytes: number, logger: StorageLogger): Promise<Set<number>> {
  const validateFully = new Set<number>();
  const defined = (b: number | undefined): b is number => b !== undefined;
  const logBases = names
    .filter((n) => n.endsWith(LOG_SUFFIX))
    .map((n) => baseOffsetOfFileName(n))
    .filter(defined);
  const logSwaps = names
    .filter((n) => n.endsWith(LOG_SUFFIX + SWAP_SUFFIX))
    .map((n) => baseOffsetOfFileName(n))
    .filter(defined);
  const accepted = new Set<number>();
  for (const base of logSwaps) {
    const final = path.join(dir, segmentFileName(base, LOG_SUFFIX));
    // The cleaner's output holds offsets of the segment it replaces, never more: up to the next
    // segment's base, or, for the last segment, up to the original's own end.
    const next = logBases.filter((b) => b > base).reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY);
    // Scanning the original's headers is only needed for the last segment.
    const originalExists = logBases.includes(base);
    const end = Number.isFinite(next) ? next : ((originalExists ? await segmentFileEndOffset(final, base) : undefined) ?? Number.MAX_SAFE_INTEGER);
    const problem = await swapFileProblem(final + SWAP_SUFFIX, base, end, maxBatchBytes);
    if (problem === undefined) {
      accepted.add(base);
      continue;
    }
    // Not what the cleaner wrote (it fsyncs the whole file before the commit point): never let
    // it replace real data.
    validateFully.add(base);
    await removeQuietly(final + SWAP_SUFFIX);
    if (originalExists) logger.warn(`discarding ${final}${SWAP_SUFFIX}: ${problem}; kept the original segment ${final}`);
    else {
      const range = Number.isFinite(next) ? `offsets ${base} to ${next - 1}` : `offsets from ${base} on`;
      logger.error(`discarding ${final}${SWAP_SUFFIX}: ${problem}; the original segment is missing too, so ${range} of ${path.basename(dir)} are lost`);
    }
  }
  for (const name of names) {
    if (!name.endsWith(SWAP_SUFFIX) || name.endsWith(LOG_SUFFIX + SWAP_SUFFIX)) continue;
    const base = baseOffsetOfFileName(name);
    const file = path.join(dir, name);
    if (base !== undefined && accepted.has(base)) await rename(file, file.slice(0, -SWAP_SUFFIX.length));
    else {
      if (base === undefined || !validateFully.has(base)) logger.warn(`discarding ${file}: its cleaner swap never reached the commit point`);
      await removeQuietly(file);
    }
  }
  for (const base of accepted) {
    const final = path.join(dir, segmentFileName(base, LOG_SUFFIX));
    await rename(final + SWAP_SUFFIX, final);
    logger.info(`completed interrupted cleaner swap of ${final}`);
    validateFully.add(base);
  }
  return validateFully;
}

/** "records of <partition> from offset X (to Y) are lost": the start of every data-loss line. */
function lossLine(partition: string, seg: LogSegment, next: LogSegment | undefined): string {
  const to = next && next.baseOffset > seg.nextOffset ? ` to ${next.baseOffset - 1}` : ' on';
  return `records of ${partition} from offset ${seg.nextOffset}${to} are lost`;
}

export async function loadSegments(dir: string, config: LogConfig, opts: LoadOptions): Promise<LoadedLog> {
  const { logger } = opts;
  let names = await readdir(dir);
  for (const name of names) {
    if (name.endsWith(DELETED_SUFFIX) || name.endsWith(CLEANED_SUFFIX) || name.endsWith('.tmp')) {
      await removeQuietly(path.join(dir, name));
    }
  }
  // The largest batch a valid segment may hold. Not max.message.bytes alone: it may have been
  // lowered after larger batches were stored, and those are data, not corruption (Kafka's
  // recovery does not bound them either). An append never exceeds segment.bytes.
  const maxBatchBytes = Math.max(config.maxMessageBytes, config.segmentBytes);
  const swapped = await settleSwaps(dir, names, maxBatchBytes, logger);
  // Listed again only when something was removed or renamed (one readdir less per log otherwise).
  if (names.some((n) => n.endsWith(DELETED_SUFFIX) || n.endsWith(CLEANED_SUFFIX) || n.endsWith('.tmp') || n.endsWith(SWAP_SUFFIX))) names = await readdir(dir);
  const bases = names
    .filter((n) => n.endsWith(LOG_SUFFIX))
    .map((n) => baseOffsetOfFileName(n))
    .filter((b): b is number => b !== undefined)
    .sort((a, b) => a - b);
  // Index files without their log are leftovers of a deletion interrupted by a crash.
  const baseSet = new Set(bases);
  for (const n of names) {
    if ((n.endsWith(INDEX_SUFFIX) || n.endsWith(TIME_INDEX_SUFFIX) || n.endsWith(TXN_INDEX_SUFFIX)) && !baseSet.has(baseOffsetOfFileName(n) ?? -1)) {
      await removeQuietly(path.join(dir, n));
    }
  }

  const settings = { indexIntervalBytes: config.indexIntervalBytes, segmentIndexBytes: config.segmentIndexBytes };
  const segments: LogSegment[] = [];
  const listed = new Set(names);
  for (const base of bases) {
    const hasTxnIndex = listed.has(segmentFileName(base, TXN_INDEX_SUFFIX));
    segments.push(await LogSegment.open(dir, base, settings, opts.now, (msg) => opts.logger.warn(msg), hasTxnIndex));
  }

  const partition = path.basename(dir);
  // Bytes cut from a segment that was not the last: the offsets up to the next segment are lost
  // with them (reported in the truncation line, not again as a gap).
  const reportedGaps = new Set<LogSegment>();
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]!;
    const next = segments[i + 1];
    const belowRecoveryPoint = next !== undefined && next.baseOffset <= opts.recoveryPoint;
    const trusted = (opts.hadCleanShutdown || belowRecoveryPoint) && !swapped.has(seg.baseOffset);
    if (trusted) {
      const sizeBefore = seg.size;
      const problem = await seg.loadFast();
      if (seg.size === sizeBefore) {
        if (problem) logger.warn(`rebuilt indexes of ${seg.logFile}: ${problem}`);
        continue;
      }
      // The tail did not parse although the segment was trusted (clean shutdown, or flushed):
      // that is lost data, not an index problem. Validate the whole segment now, CRCs included.
      await seg.rebuildIndexes(true, maxBatchBytes);
      logger.error(
        `${lossLine(partition, seg, next)}: recovery truncated ${seg.logFile} at position ${seg.size}, removed ${sizeBefore - seg.size} bytes (${problem ?? 'invalid tail'}) although ${opts.hadCleanShutdown ? 'the log was shut down cleanly' : 'it was below the recovery point'}; log ends at offset ${seg.nextOffset}`,
      );
      reportedGaps.add(seg);
      continue;
    }
    const result = await seg.rebuildIndexes(true, maxBatchBytes);
    if (result.truncatedBytes === 0) continue;
    // Later segments cannot follow a hole; Kafka drops them too. One line says what is lost.
    const dropped = segments.splice(i + 1);
    const droppedText =
      dropped.length === 0
        ? ''
        : `, and recovery deleted the ${dropped.length} later segment(s) that followed the corrupt one: ${dropped.map((d) => `${d.logFile} (${d.size} bytes, base offset ${d.baseOffset})`).join(', ')}`;
    logger.warn(
      `${lossLine(partition, seg, undefined)}: recovery truncated ${seg.logFile} at position ${result.validBytes}, removed ${result.truncatedBytes} bytes (${result.reason})${droppedText}; log now ends at offset ${seg.nextOffset}`,
    );
    for (const d of dropped) {
      await d.close();
      await removeQuietly(d.logFile);
      await removeQuietly(d.offsetIndex.file);
      await removeQuietly(d.timeIndex.file);
    }
  }
  // A segment missing in the middle leaves offsets no segment holds. Served like Kafka serves
  // it (a fetch inside the gap gets the first batch after it), but said once, with the range.
  // Compaction leaves such gaps legitimately, so compacted logs are not checked.
  if (!isCompacted(config)) {
    for (let i = 0; i + 1 < segments.length; i++) {
      const seg = segments[i]!;
      const next = segments[i + 1]!;
      if (seg.nextOffset >= next.baseOffset || reportedGaps.has(seg)) continue;
      logger.error(
        `log ${partition} is missing offsets ${seg.nextOffset} to ${next.baseOffset - 1} (${next.baseOffset - seg.nextOffset} offsets): no segment holds them between ${seg.logFile} and ${next.logFile} (a segment file is gone); serving the rest, a fetch inside the gap gets the first batch after it`,
      );
    }
  }
  for (const seg of segments) {
    try {
      await seg.persistIndexes();
    } catch (err) {
      // Indexes are caches of the log: on a full disk they stay in memory (written at the
      // next flush, rebuilt at the next start if need be) rather than take the log offline.
      const code = errnoOf(err);
      if (code !== 'ENOSPC' && code !== 'EDQUOT') throw err;
      logger.warn(`indexes of ${seg.logFile} are kept in memory only: ${code} (the disk is full)`);
    }
  }
  const last = segments[segments.length - 1];
  return { segments, nextOffset: last ? last.nextOffset : 0 };
}
