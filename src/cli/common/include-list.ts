/**
 * Kafka's include list of topics (TopicFilter.IncludeList, once the "whitelist"), as
 * kafka-mirror-maker.sh and kafka-replica-verification.sh take it: surrounding quotes dropped,
 * spaces removed, commas read as "|", and the whole topic name must match. Java and JavaScript
 * agree on the regex syntax users write for topic names (classes, alternation, quantifiers).
 */
import { CliError } from './tool.js';

export function includePattern(list: string): RegExp {
  const regex = list
    .trim()
    .replace(/,/g, '|')
    .replace(/ /g, '')
    .replace(/^["']+/, '')
    .replace(/["']+$/, '');
  try {
    return new RegExp(`^(?:${regex})$`);
  } catch {
    throw new CliError(`Invalid expression syntax: ${list}`);
  }
}
