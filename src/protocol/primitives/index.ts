import type { Reader } from './reader.js';
import { Writer } from './writer.js';
export { Reader, DecodeError } from './reader.js';
export { Writer };
export { ZERO_UUID, randomUuid, uuidFromBytes, uuidToBytes } from './uuid.js';

/**
 * What an encoder accepts: every field optional (absent means the field's default from the
 * spec), recursively, so handlers only spell out what they mean.
 */
export type Input<T> = T extends Buffer | bigint | string | number | boolean | null
  ? T
  : T extends readonly (infer U)[]
    ? readonly Input<U>[]
    : { [K in keyof T]?: Input<T[K]> };

/** Shared empty buffer: the default for non-nullable bytes fields. */
export const EMPTY: Buffer = Buffer.alloc(0);

/** A generated message: its version range and how to write and read it. */
export interface MessageCodec<T> {
  readonly name: string;
  readonly minVersion: number;
  readonly maxVersion: number;
  /** First flexible version (compact encodings, tagged fields); Infinity when none. */
  readonly flexibleFrom: number;
  write(w: Writer, d: Input<T>, version: number): void;
  read(r: Reader, version: number): T;
  defaults(): T;
}
