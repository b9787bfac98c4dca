/**
 * The server-side assignors by name: `group.consumer.assignors` lists them (Kafka 4 accepts the
 * short names and the built-in assignors' class names; the first is the group's default) and a
 * member's `ServerAssignor` picks one of them by short name.
 */
import { ConfigError, invalidValue } from '../../../config/errors.js';
import { RangeAssignor } from './range-assignor.js';
import type { ServerAssignor } from './types.js';
import { UniformAssignor } from './uniform-assignor.js';

export const CONSUMER_GROUP_ASSIGNORS_CONFIG = 'group.consumer.assignors';
/** Kafka 4's default: uniform, then range. */
export const DEFAULT_CONSUMER_GROUP_ASSIGNORS: readonly string[] = ['uniform', 'range'];

const BUILT_IN: ReadonlyMap<string, () => ServerAssignor> = new Map<string, () => ServerAssignor>([
  ['uniform', () => new UniformAssignor()],
  ['org.apache.kafka.coordinator.group.assignor.UniformAssignor', () => new UniformAssignor()],
  ['range', () => new RangeAssignor()],
  ['org.apache.kafka.coordinator.group.assignor.RangeAssignor', () => new RangeAssignor()],
]);

/**
 * The assignors named, in order (short or class names; a name listed twice counts once). An
 * unknown name is a ConfigError naming it, as Kafka's "Class ... could not be found".
 */
export function assignorsByName(names: readonly string[]): ServerAssignor[] {
  const out: ServerAssignor[] = [];
  for (const name of names) {
    const make = BUILT_IN.get(name);
    if (!make) throw invalidValue(CONSUMER_GROUP_ASSIGNORS_CONFIG, name, `Class ${name} could not be found.`);
    const assignor = make();
    if (!out.some((a) => a.name === assignor.name)) out.push(assignor);
  }
  return out;
}

/** `group.consumer.assignors` as written in a properties file: a comma-separated list, at least one. */
export function parseAssignorList(value: string | readonly string[]): ServerAssignor[] {
  const names = (typeof value === 'string' ? value.split(',') : value).map((s) => s.trim()).filter((s) => s !== '');
  if (names.length === 0)
    throw new ConfigError(
      `Invalid value ${String(value)} for configuration ${CONSUMER_GROUP_ASSIGNORS_CONFIG}: at least one assignor is required`,
      CONSUMER_GROUP_ASSIGNORS_CONFIG,
    );
  return assignorsByName(names);
}

/**
 * The assignor a consumer group uses, as Kafka 4 picks it: the one most of its members chose
 * (`ServerAssignor` in their heartbeats; null = no choice), ties going to the one listed first in
 * `group.consumer.assignors` (Kafka leaves ties to a HashMap's order), and the first listed when
 * no member chose. A choice the broker does not offer is not counted (the heartbeat carrying it
 * was refused with UNSUPPORTED_ASSIGNOR).
 */
export function preferredAssignor(configured: readonly ServerAssignor[], choices: Iterable<string | null>): ServerAssignor {
  if (configured.length === 0) throw new ConfigError(`${CONSUMER_GROUP_ASSIGNORS_CONFIG} lists no assignor`, CONSUMER_GROUP_ASSIGNORS_CONFIG);
  const counts = new Map<string, number>();
  for (const name of choices) if (name !== null && name !== '') counts.set(name, (counts.get(name) ?? 0) + 1);
  let best = configured[0]!;
  let bestCount = 0;
  for (const a of configured) {
    const n = counts.get(a.name) ?? 0;
    if (n > bestCount) {
      best = a;
      bestCount = n;
    }
  }
  return best;
}

export { RangeAssignor, UniformAssignor };
export { RANGE_ASSIGNOR_NAME } from './range-assignor.js';
export { UNIFORM_ASSIGNOR_NAME } from './uniform-assignor.js';
