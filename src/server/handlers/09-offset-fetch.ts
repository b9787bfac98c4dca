/**
 * OffsetFetch v0–v9: committed offsets with their metadata; a null topic list (v2+) means every
 * partition the group has; v8+ asks for several groups at once.
 */
import { OffsetFetchRequestCodec, OffsetFetchResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { defineHandler } from './types.js';

type TopicsQuery = { name: string; partitions: number[] }[] | null;

export const offsetFetchHandler = defineHandler({
  apiKey: 9,
  request: OffsetFetchRequestCodec,
  response: OffsetFetchResponseCodec,
  minVersion: 0,
  maxVersion: 9,
  async handle(req, ctx) {
    const version = ctx.header.apiVersion;
    const gc = ctx.services.groupCoordinator;
    if (version >= 8) {
      const groups = await Promise.all(
        req.groups.map(async (g) => {
          const q: TopicsQuery = g.topics === null ? null : g.topics.map((t) => ({ name: t.name, partitions: t.partitionIndexes }));
          const res = await gc.fetchOffsets(g.groupId, q, req.requireStable);
          return { groupId: g.groupId, errorCode: res.errorCode, topics: res.topics };
        }),
      );
      return { throttleTimeMs: 0, groups };
    }
    const q: TopicsQuery = req.topics === null ? null : req.topics.map((t) => ({ name: t.name, partitions: t.partitionIndexes }));
    const res = await gc.fetchOffsets(req.groupId, q, version >= 7 && req.requireStable);
    if (res.errorCode !== ErrorCode.NONE && version < 2) {
      // v0–v1 have no top-level error: each requested partition carries it.
      const topics = (q ?? []).map((t) => ({
        name: t.name,
        partitions: t.partitions.map((partitionIndex) => ({ partitionIndex, committedOffset: -1n, committedLeaderEpoch: -1, metadata: '', errorCode: res.errorCode })),
      }));
      return { throttleTimeMs: 0, topics };
    }
    return { throttleTimeMs: 0, errorCode: res.errorCode, topics: res.topics };
  },
});
