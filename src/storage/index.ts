/** Public surface of the storage module. */
export { LocalLog, type ReadResult, type LogOpenOptions } from './log/local-log.js';
export type { AppendOptions, AppendResult } from './log/append-types.js';
export { UnifiedLog, type UnifiedLogOptions } from './log/unified-log.js';
export { LogManager, type LogManagerOptions, type LogDirState } from './manager/log-manager.js';
export {
  defaultLogConfig,
  logConfigFromProps,
  validateLogConfig,
  InvalidConfigError,
  type LogConfig,
  type CleanupPolicy,
  type TimestampType,
} from './config.js';
export {
  StorageError,
  CorruptRecordError,
  RecordTooLargeError,
  KafkaStorageError,
  OffsetOutOfRangeError,
  UnexpectedAppendOffsetError,
  UnexpectedStorageError,
  LogClosedError,
  LogDirLockedError,
  type KafkaErrorName,
} from './errors.js';
export { LeaderEpochCache } from './log/leader-epoch-cache.js';
export { checkLogDirs, ensureDirectory, LogDirError } from './manager/log-dirs.js';
export { readMetaProperties, writeMetaProperties } from './checkpoint/checkpoint-files.js';
export type { StorageLogger } from './logger.js';
