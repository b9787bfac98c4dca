/** Kafka's topic-name rules: [a-zA-Z0-9._-], at most 249 characters, not "." or "..". */
const LEGAL = /^[a-zA-Z0-9._-]+$/;
export const MAX_TOPIC_NAME_LENGTH = 249;

/** Returns why a name is illegal, or null when it is fine. */
export function topicNameError(name: string): string | null {
  if (name.length === 0) return 'Topic name is illegal, it can\'t be empty';
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
