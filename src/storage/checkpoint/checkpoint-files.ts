/**
 * Kafka's small text checkpoint files and meta.properties, their formats; each is written
 * atomically (atomic-file.ts), so a crash leaves either the old or the new content.
 *
 *   recovery-point-offset-checkpoint, log-start-offset-checkpoint, replication-offset-checkpoint,
 *   cleaner-offset-checkpoint:  "0\n<count>\n<topic> <partition> <offset>\n..."
 *   leader-epoch-checkpoint:     "0\n<count>\n<epoch> <startOffset>\n..."
 */
import { readWholeFile } from './whole-file.js';
import path from 'node:path';
import { tpKey } from '../../common/partition-keys.js';
import { errnoOf } from '../errors.js';
import { writeFileAtomically } from './atomic-file.js';

export const RECOVERY_POINT_CHECKPOINT = 'recovery-point-offset-checkpoint';
export const LOG_START_OFFSET_CHECKPOINT = 'log-start-offset-checkpoint';
export const REPLICATION_OFFSET_CHECKPOINT = 'replication-offset-checkpoint';
export const CLEANER_OFFSET_CHECKPOINT = 'cleaner-offset-checkpoint';
export const LEADER_EPOCH_CHECKPOINT = 'leader-epoch-checkpoint';
export const META_PROPERTIES = 'meta.properties';
export const CLEAN_SHUTDOWN_MARKER = '.kafka_cleanshutdown';

const VERSION = 0;

export class MalformedCheckpointError extends Error {
  constructor(file: string, reason: string) {
    super(`malformed checkpoint file ${file}: ${reason}`);
    this.name = 'MalformedCheckpointError';
  }
}

async function readLines(file: string): Promise<string[] | undefined> {
  try {
    const text = (await readWholeFile(file)).toString('utf8');
    return text.split('\n').filter((l) => l.trim() !== '');
  } catch (err) {
    if (errnoOf(err) === 'ENOENT') return undefined;
    throw err;
  }
}

function parseIntStrict(file: string, raw: string | undefined, what: string): number {
  if (raw === undefined || !/^-?\d+$/.test(raw.trim())) throw new MalformedCheckpointError(file, `bad ${what} "${raw}"`);
  return Number(raw.trim());
}

/** Parses header + entry lines; each entry is split on single spaces. */
function parseEntries(file: string, lines: string[], fields: number): string[][] {
  const version = parseIntStrict(file, lines[0], 'version');
  if (version !== VERSION) throw new MalformedCheckpointError(file, `unsupported version ${version}`);
  const count = parseIntStrict(file, lines[1], 'count');
  const entries = lines.slice(2).map((l) => l.trim().split(' '));
  if (entries.length !== count) throw new MalformedCheckpointError(file, `expected ${count} entries, found ${entries.length}`);
  for (const e of entries) if (e.length !== fields) throw new MalformedCheckpointError(file, `bad line "${e.join(' ')}"`);
  return entries;
}

export type TopicPartitionKey = string; // "<topic>-<partition>", same as the log directory name

/** Reads a `topic partition offset` checkpoint; a missing file is an empty map. */
export async function readOffsetCheckpoint(file: string): Promise<Map<TopicPartitionKey, number>> {
  const lines = await readLines(file);
  const result = new Map<TopicPartitionKey, number>();
  if (lines === undefined) return result;
  for (const [topic, partition, offset] of parseEntries(file, lines, 3)) {
    result.set(tpKey(topic!, parseIntStrict(file, partition, 'partition')), parseIntStrict(file, offset, 'offset'));
  }
  return result;
}

export async function writeOffsetCheckpoint(file: string, entries: Iterable<{ topic: string; partition: number; offset: number }>): Promise<void> {
  const lines: string[] = [];
  for (const e of entries) lines.push(`${e.topic} ${e.partition} ${e.offset}`);
  await writeFileAtomically(file, `${VERSION}\n${lines.length}\n${lines.map((l) => l + '\n').join('')}`);
}

export interface EpochEntry {
  epoch: number;
  startOffset: number;
}

export async function readLeaderEpochCheckpoint(file: string): Promise<EpochEntry[]> {
  const lines = await readLines(file);
  if (lines === undefined) return [];
  return parseEntries(file, lines, 2).map(([epoch, start]) => ({
    epoch: parseIntStrict(file, epoch, 'epoch'),
    startOffset: parseIntStrict(file, start, 'start offset'),
  }));
}

export async function writeLeaderEpochCheckpoint(file: string, entries: EpochEntry[]): Promise<void> {
  const body = entries.map((e) => `${e.epoch} ${e.startOffset}\n`).join('');
  await writeFileAtomically(file, `${VERSION}\n${entries.length}\n${body}`);
}

/** meta.properties: Java properties text (comment lines, key=value). */
export async function readMetaProperties(dir: string): Promise<Record<string, string> | undefined> {
  const lines = await readLines(path.join(dir, META_PROPERTIES));
  if (lines === undefined) return undefined;
  const props: Record<string, string> = {};
  for (const line of lines) {
    if (line.startsWith('#') || line.startsWith('!')) continue;
    const eq = line.indexOf('=');
    if (eq > 0) props[line.slice(0, eq).trim()] = line.slice(eq + 1).trim();
  }
  return props;
}

export async function writeMetaProperties(dir: string, props: Record<string, string>): Promise<void> {
  const body = Object.entries(props)
    .map(([k, v]) => `${k}=${v}\n`)
    .join('');
  await writeFileAtomically(path.join(dir, META_PROPERTIES), `#\n#${new Date().toString()}\n${body}`);
}
