/**
 * Loading a partition directory at start-up: finishing or discarding interrupted cleaner swaps,
 * removing leftovers, and validating every batch past the recovery point after an unclean
 * shutdown. A torn or corrupt tail is truncated and logged with file, position and size.
 */
import { readdir, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { LogConfig } from './config.js';
import type { StorageLogger } from './logger.js';
import {
  CLEANED_SUFFIX,
  DELETED_SUFFIX,
  INDEX_SUFFIX,
  LOG_SUFFIX,
  LogSegment,
  SWAP_SUFFIX,
  TIME_INDEX_SUFFIX,
  baseOffsetOfFileName,
  segmentFileName,
} from './log-segment.js';

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

/** Completes swaps whose log file reached `.swap` (the commit point); discards the rest. */
async function settleSwaps(dir: string, names: string[], logger: StorageLogger): Promise<Set<number>> {
  const completed = new Set<number>();
  const logSwaps = new Set(names.filter((n) => n.endsWith(LOG_SUFFIX + SWAP_SUFFIX)).map((n) => baseOffsetOfFileName(n)));
  for (const name of names) {
    if (!name.endsWith(SWAP_SUFFIX) || name.endsWith(LOG_SUFFIX + SWAP_SUFFIX)) continue;
    const base = baseOffsetOfFileName(name);
    const file = path.join(dir, name);
    if (logSwaps.has(base)) await rename(file, file.slice(0, -SWAP_SUFFIX.length));
    else {
      logger.warn(`discarding ${file}: its cleaner swap never reached the commit point`);
      await removeQuietly(file);
    }
  }
  for (const base of logSwaps) {
    if (base === undefined) continue;
    const final = path.join(dir, segmentFileName(base, LOG_SUFFIX));
    await rename(final + SWAP_SUFFIX, final);
    logger.info(`completed interrupted cleaner swap of ${final}`);
    completed.add(base);
  }
  return completed;
}

export async function loadSegments(dir: string, config: LogConfig, opts: LoadOptions): Promise<LoadedLog> {
  const { logger } = opts;
  let names = await readdir(dir);
  for (const name of names) {
    if (name.endsWith(DELETED_SUFFIX) || name.endsWith(CLEANED_SUFFIX) || name.endsWith('.tmp')) {
      await removeQuietly(path.join(dir, name));
    }
  }
  const swapped = await settleSwaps(dir, names, logger);
  names = await readdir(dir);
  const bases = names
    .filter((n) => n.endsWith(LOG_SUFFIX))
    .map((n) => baseOffsetOfFileName(n))
    .filter((b): b is number => b !== undefined)
    .sort((a, b) => a - b);
  // Index files without their log are leftovers of a deletion interrupted by a crash.
  const baseSet = new Set(bases);
  for (const n of names) {
    if ((n.endsWith(INDEX_SUFFIX) || n.endsWith(TIME_INDEX_SUFFIX)) && !baseSet.has(baseOffsetOfFileName(n) ?? -1)) {
      await removeQuietly(path.join(dir, n));
    }
  }

  const settings = { indexIntervalBytes: config.indexIntervalBytes, segmentIndexBytes: config.segmentIndexBytes };
  const segments: LogSegment[] = [];
  for (const base of bases) segments.push(await LogSegment.open(dir, base, settings, opts.now));

  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]!;
    const next = segments[i + 1];
    const belowRecoveryPoint = next !== undefined && next.baseOffset <= opts.recoveryPoint;
    const trusted = (opts.hadCleanShutdown || belowRecoveryPoint) && !swapped.has(seg.baseOffset);
    if (trusted) {
      const problem = await seg.loadFast();
      if (problem) logger.warn(`rebuilt indexes of ${seg.logFile}: ${problem}`);
      continue;
    }
    const result = await seg.rebuildIndexes(true, config.maxMessageBytes);
    if (result.truncatedBytes === 0) continue;
    logger.warn(
      `recovery truncated ${seg.logFile} at position ${result.validBytes}: removed ${result.truncatedBytes} bytes (${result.reason}); log now ends at offset ${seg.nextOffset}`,
    );
    // Later segments cannot follow a hole; Kafka drops them too. Say exactly what goes.
    for (const dropped of segments.splice(i + 1)) {
      logger.warn(
        `recovery deleted ${dropped.logFile} (${dropped.size} bytes, base offset ${dropped.baseOffset}) because it follows the corrupt segment ${seg.logFile}`,
      );
      await dropped.close();
      await removeQuietly(dropped.logFile);
      await removeQuietly(dropped.offsetIndex.file);
      await removeQuietly(dropped.timeIndex.file);
    }
  }
  for (const seg of segments) await seg.persistIndexes();
  const last = segments[segments.length - 1];
  return { segments, nextOffset: last ? last.nextOffset : 0 };
}
