/**
 * Turning AlterConfigs / IncrementalAlterConfigs operations into a resource's new override map.
 * Pure functions: validation of the resulting values is done by the caller per resource type.
 */
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import type { ConfigType } from '../../config/index.js';

/** IncrementalAlterConfigs operation codes. */
export const AlterConfigOp = { SET: 0, DELETE: 1, APPEND: 2, SUBTRACT: 3 } as const;

export interface IncrementalOp {
  name: string;
  op: number;
  value: string | null;
}

/** What the caller knows about a key: its type and textual default (the base of APPEND). */
export type KeyInfo = (name: string) => { type: ConfigType; default: string | null } | undefined;

const OP_NAMES: Record<number, string> = { 2: 'append', 3: 'subtract' };

function splitList(text: string): string[] {
  return text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/** Kafka refuses two operations on the same key in one resource. */
function refuseDuplicates(names: readonly string[]): void {
  const seen = new Set<string>();
  const dups = new Set<string>();
  for (const n of names) (seen.has(n) ? dups : seen).add(n);
  if (dups.size > 0) throw new KafkaError(ErrorCode.INVALID_REQUEST, `Error due to duplicate config keys: ${[...dups].join(', ')}`);
}

/**
 * Applies incremental operations to `current` (the overrides as stored). APPEND/SUBTRACT work on
 * list configs only, starting from the override or else the config's default, as Kafka does.
 */
export function applyIncrementalOps(current: Readonly<Record<string, string>>, ops: readonly IncrementalOp[], keyInfo: KeyInfo): Record<string, string> {
  refuseDuplicates(ops.map((o) => o.name));
  const next: Record<string, string> = { ...current };
  for (const { name, op, value } of ops) {
    switch (op) {
      case AlterConfigOp.SET:
        if (value === null) throw new KafkaError(ErrorCode.INVALID_CONFIG, `Null value not supported for : ${name}`);
        next[name] = value;
        break;
      case AlterConfigOp.DELETE:
        delete next[name];
        break;
      case AlterConfigOp.APPEND:
      case AlterConfigOp.SUBTRACT: {
        const info = keyInfo(name);
        if (info === undefined) throw new KafkaError(ErrorCode.INVALID_CONFIG, `Unknown config name: ${name}`);
        if (info.type !== 'list') {
          throw new KafkaError(ErrorCode.INVALID_CONFIG, `Config value ${OP_NAMES[op]} is not allowed for config key: ${name}`);
        }
        const base = splitList(next[name] ?? info.default ?? '');
        const items = splitList(value ?? '');
        // Sets, not scans: a list of 100,000 items must not cost 100,000 squared.
        const inBase = new Set(base);
        const removed = new Set(items);
        const result = op === AlterConfigOp.APPEND ? [...base, ...items.filter((i) => !inBase.has(i))] : base.filter((i) => !removed.has(i));
        next[name] = result.join(',');
        break;
      }
      default:
        throw new KafkaError(ErrorCode.INVALID_REQUEST, `Unknown alter config operation type ${op}`);
    }
  }
  return next;
}

/** Legacy AlterConfigs replaces the whole override set; a null value leaves the key out. */
export function replaceAll(entries: readonly { name: string; value: string | null }[]): Record<string, string> {
  refuseDuplicates(entries.map((e) => e.name));
  const next: Record<string, string> = {};
  for (const { name, value } of entries) if (value !== null) next[name] = value;
  return next;
}
