/**
 * Kafka record formats, sans-IO: v2 record batches (header accessors, encode/decode,
 * validation, control batches), record codecs, compression, and legacy message sets (magic
 * 0/1) with up/down conversion.
 */
export * from './batch-header.js';
export * from './errors.js';
export * from './varint.js';
export * from './record.js';
export * from './record-walk.js';
export * from './batch.js';
export * from './batch-entries.js';
export * from './control.js';
export * from './legacy.js';
export * from './legacy-convert.js';
export * from './compression/index.js';
export * from './read-limits.js';
