/** Kafka's `--topic` filter for listing tools: a regular expression matching the whole name (or the literal name). */
import { CliError } from './tool.js';

export function topicFilter(pattern: string | undefined): (name: string) => boolean {
  if (pattern === undefined) return () => true;
  let re: RegExp;
  try {
    re = new RegExp(`^(?:${pattern})$`);
  } catch {
    throw new CliError(`--topic "${pattern}" is not a valid regular expression`);
  }
  return (name) => name === pattern || re.test(name);
}
