/**
 * The partition directories of a log directory: `topic-partition` holds a log, and a deleted
 * partition's directory is renamed `…-delete` until it is removed. Apart from LogManager because
 * these are rules about names on disk, which the manager's start-up scan and deletion only apply.
 */
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';

const LOG_DIR_NAME = /^(.+)-(\d+)$/;

/** The longest file name most file systems take (NAME_MAX). */
const MAX_FILE_NAME = 255;

/**
 * Where a deleted partition's directory goes until it is removed: `topic-partition.unique-delete`,
 * the topic cut short when needed so the name fits NAME_MAX (a 249-character topic, the longest
 * Kafka allows, plus the suffix is too long, and the rename failed with ENAMETOOLONG).
 */
export function deleteDirName(topic: string, partition: number): string {
  const suffix = `-${partition}.${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}-delete`;
  return topic.slice(0, Math.max(0, MAX_FILE_NAME - suffix.length)) + suffix;
}

/**
 * The partitions whose logs `dir` holds. Directories left by deletions that did not finish are
 * removed on the way (not awaited); `-future` directories (Kafka's moves between log
 * directories) are not logs of this broker's.
 */
export async function findPartitionDirs(dir: string): Promise<{ topic: string; partition: number }[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const found: { topic: string; partition: number }[] = [];
  for (const entry of entries) {
    if (!entry.isDirectory()) continue;
    if (entry.name.endsWith('-delete')) {
      void rm(path.join(dir, entry.name), { recursive: true, force: true });
      continue;
    }
    const m = LOG_DIR_NAME.exec(entry.name);
    if (!m || entry.name.endsWith('-future')) continue;
    found.push({ topic: m[1]!, partition: Number(m[2]) });
  }
  return found;
}
