/**
 * Just enough of the consumer protocol's Subscription (the JoinGroup metadata of protocol type
 * "consumer") to know which topics a group reads: offset expiry (KIP-496) and OffsetDelete
 * need it. Versions 0–3 share the leading fields: int16 version, array of int16-length strings.
 */
import { Reader } from '../../protocol/primitives/index.js';

export function subscribedTopics(metadata: Buffer): string[] | null {
  try {
    const r = new Reader(metadata);
    r.int16();
    const n = r.int32();
    if (n < 0) return [];
    const topics: string[] = [];
    for (let i = 0; i < n; i++) topics.push(r.string(false));
    return topics;
  } catch {
    return null; // not a consumer subscription we understand
  }
}
