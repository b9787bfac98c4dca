/**
 * Request and response headers. Which header version a message uses follows from whether its
 * API version is flexible; ApiVersions responses always use header v0 so that a client that
 * sent a version the broker does not know can still read the answer.
 */
import type { Reader, Writer, MessageCodec } from '../protocol/primitives/index.js';
import { RequestHeaderCodec, ResponseHeaderCodec } from '../protocol/messages/index.js';

export const API_VERSIONS_KEY = 18;
const CONTROLLED_SHUTDOWN_KEY = 7;

export interface RequestHeader {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  clientId: string | null;
}

export function isFlexible(codec: MessageCodec<unknown>, version: number): boolean {
  return version >= codec.flexibleFrom;
}

export function requestHeaderVersion(apiKey: number, flexible: boolean): number {
  if (flexible) return 2;
  return apiKey === CONTROLLED_SHUTDOWN_KEY ? 0 : 1;
}

export function responseHeaderVersion(apiKey: number, flexible: boolean): number {
  return flexible && apiKey !== API_VERSIONS_KEY ? 1 : 0;
}

/** The first 8 bytes of every request: key, version and correlation id, in every header version. */
export function peekHeader(frame: Buffer): { apiKey: number; apiVersion: number; correlationId: number } {
  return { apiKey: frame.readInt16BE(0), apiVersion: frame.readInt16BE(2), correlationId: frame.readInt32BE(4) };
}

export function readRequestHeader(r: Reader, apiKey: number, flexible: boolean): RequestHeader {
  const h = RequestHeaderCodec.read(r, requestHeaderVersion(apiKey, flexible));
  return { apiKey: h.requestApiKey, apiVersion: h.requestApiVersion, correlationId: h.correlationId, clientId: h.clientId };
}

export function writeResponseHeader(w: Writer, apiKey: number, flexible: boolean, correlationId: number): void {
  ResponseHeaderCodec.write(w, { correlationId }, responseHeaderVersion(apiKey, flexible));
}
