/**
 * The clean shutdown marker (`.kafka_cleanshutdown`) of a log directory. Found at start-up, it
 * lets recovery trust the recovery points; so it is removed as soon as the directory is loaded
 * (a crash from then on must not pass for a clean shutdown) and written at shutdown only when
 * every log was flushed and the checkpoints were written. Apart from LogManager: this promise
 * to the next start is one rule, read here in one place.
 */
import { access } from 'node:fs/promises';
import path from 'node:path';
import { removeIfExists, writeFileAtomically } from '../checkpoint/atomic-file.js';
import { CLEAN_SHUTDOWN_MARKER } from '../checkpoint/checkpoint-files.js';
import type { StorageLogger } from '../logger.js';

export function hadCleanShutdown(dir: string): Promise<boolean> {
  return access(path.join(dir, CLEAN_SHUTDOWN_MARKER)).then(
    () => true,
    () => false,
  );
}

export function removeCleanShutdownMarker(dir: string): Promise<boolean> {
  return removeIfExists(path.join(dir, CLEAN_SHUTDOWN_MARKER));
}

/**
 * Writes the marker when no log's final flush failed (`unclean` names those that did) and the
 * checkpoints were written; otherwise says why not (the next start recovers instead). Never rejects.
 */
export async function markCleanShutdown(dir: string, unclean: readonly string[], checkpointed: boolean, logger: StorageLogger): Promise<void> {
  const reasons = [
    ...(unclean.length > 0
      ? [`the final flush failed for ${unclean.slice(0, 5).join(', ')}${unclean.length > 5 ? ` and ${unclean.length - 5} more logs` : ''}`]
      : []),
    ...(checkpointed ? [] : ['the checkpoint files could not be written']),
  ];
  if (reasons.length > 0) {
    logger.error(`not writing the clean shutdown marker in ${dir}: ${reasons.join('; ')}; the next start recovers its logs from the recovery points`);
  } else {
    await writeFileAtomically(path.join(dir, CLEAN_SHUTDOWN_MARKER), '').catch((err) =>
      logger.warn(`cannot write clean shutdown marker in ${dir}: ${String(err)}`),
    );
  }
}
