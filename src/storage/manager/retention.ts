/**
 * Retention: whole-segment deletion by log start offset, age (retention.ms) and total size
 * (retention.bytes), Kafka's rules. Deleted segments are renamed `.deleted` and unlinked after
 * file.delete.delay.ms so in-flight reads finish.
 */
import { isDeleteRetained } from '../config.js';
import type { LocalLog } from '../log/local-log.js';

export async function applyRetention(log: LocalLog, now: number): Promise<number> {
  let deleted = await log.deleteOldSegments(
    (seg, next) => (next ? next.baseOffset : log.logEndOffset) <= log.logStartOffset && (next !== undefined || seg.size > 0),
    'log start offset breach',
  );
  const cfg = log.config;
  if (!isDeleteRetained(cfg)) return deleted;
  if (cfg.retentionMs >= 0) {
    deleted += await log.deleteOldSegments(
      // Empty segments (left by compaction) in front of expired ones go too.
      (seg, next) => (next !== undefined && seg.size === 0) || (seg.size > 0 && now - seg.largestTimestamp > cfg.retentionMs),
      `retention time ${cfg.retentionMs}ms breach`,
    );
  }
  if (cfg.retentionBytes >= 0) {
    let excess = log.size - cfg.retentionBytes;
    deleted += await log.deleteOldSegments((seg, next) => {
      // Like Kafka, the active segment is never deleted for size alone.
      if (next === undefined || excess - seg.size < 0) return false;
      excess -= seg.size;
      return true;
    }, `retention size ${cfg.retentionBytes} bytes breach`);
  }
  return deleted;
}
