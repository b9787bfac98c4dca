/** The logging surface storage needs; a pino logger satisfies it. */
export interface StorageLogger {
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string): void;
}

export const silentLogger: StorageLogger = {
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};
