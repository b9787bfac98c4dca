/** Kafka's topic-name rules: [a-zA-Z0-9._-], at most 249 characters, not "." or "..". */
import { ErrorCode, KafkaError } from '../protocol/errors.js';

const LEGAL = /^[a-zA-Z0-9._-]+$/;
export const MAX_TOPIC_NAME_LENGTH = 249;

/** Returns why a name is illegal, or null when it is fine. */
export function topicNameError(name: string): string | null {
  if (name.length === 0) return "Topic name is illegal, it can't be empty";
  if (name === '.' || name === '..') return 'Topic name cannot be "." or ".."';
  if (name.length > MAX_TOPIC_NAME_LENGTH) {
    return `Topic name is illegal, it can't be longer than ${MAX_TOPIC_NAME_LENGTH} characters, topic name: ${name}`;
  }
  if (!LEGAL.test(name)) {
    return `Topic name "${name}" is illegal, it contains a character other than ASCII alphanumerics, '.', '_' and '-'`;
  }
  return null;
}

/** '.' and '_' collide in metric names, so Kafka refuses topics differing only by them. */
export function collisionKey(name: string): string {
  return name.replace(/\./g, '_');
}

/** Each existing name by its collision key, built once for a batch of new names. */
export function collisionIndex(names: Iterable<string>): Map<string, string> {
  const index = new Map<string, string>();
  for (const name of names) index.set(collisionKey(name), name);
  return index;
}

/**
 * Refuses a new topic's name as Kafka does (illegal name, an existing topic, a collision on
 * '.'/'_'); shared by every MetadataStore so the errors are the same whatever keeps the topics.
 * `collisions` is collisionIndex() of the existing names (a batch adds each name it accepts).
 */
export function checkNewTopicName(name: string, existing: { has(name: string): boolean }, collisions: ReadonlyMap<string, string>): void {
  const nameError = topicNameError(name);
  if (nameError) throw new KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, nameError);
  if (existing.has(name)) throw new KafkaError(ErrorCode.TOPIC_ALREADY_EXISTS, `Topic '${name}' already exists.`);
  const other = collisions.get(collisionKey(name));
  if (other !== undefined && other !== name) {
    throw new KafkaError(ErrorCode.INVALID_TOPIC_EXCEPTION, `Topic '${name}' collides with existing topic: ${other}`);
  }
}
