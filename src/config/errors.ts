/**
 * A configuration problem that stops start-up. The message is meant to be printed as one line,
 * e.g. "Invalid value abc for configuration num.partitions: Not a number of type INT".
 */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    message: string,
    readonly key?: string,
  ) {
    super(message);
  }
}

/** The Kafka-style message for a value that fails parsing or validation. */
export function invalidValue(key: string, value: string, reason: string): ConfigError {
  return new ConfigError(`Invalid value ${value} for configuration ${key}: ${reason}`, key);
}
