import { DeleteRecordsRequestCodec, DeleteRecordsResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation, ResourceType, resourceChecks } from './authz.js';
import { defineHandler } from './types.js';
import { LoopSlicer, mapInSlices } from '../../common/slices.js';
import type { DeleteRecordsPart } from '../../replication/shards/partition-shards.js';

/** Kafka's check: DELETE on each topic. */
const may = resourceChecks({
  deleteTopic: { resource: ResourceType.TOPIC, operation: AclOperation.DELETE },
});

/**
 * DeleteRecords v0-v2: each partition's leader moves its log start offset; with followers the
 * answer waits until their log starts have followed (the low watermark), up to timeout_ms.
 */
export const deleteRecordsHandler = defineHandler({
  apiKey: 21,
  request: DeleteRecordsRequestCodec,
  response: DeleteRecordsResponseCodec,
  minVersion: 0,
  maxVersion: 2,
  slicedField: 'topics',
  authorize: { resources: may },
  async handle(req, ctx) {
    const allowed = req.topics.map((t) => may.deleteTopic.allows(ctx, t.name));
    // One request to the partitions' owners: every partition is cut first, then they wait for
    // their followers together (one timeout for the request).
    const parts: DeleteRecordsPart[] = [];
    for (let ti = 0; ti < req.topics.length; ti++) {
      if (!allowed[ti]) continue;
      const t = req.topics[ti]!;
      for (const p of t.partitions) {
        // Offsets beyond 2^53 cannot be in any log; they land in OFFSET_OUT_OF_RANGE like any offset past the HW.
        const offset = p.offset > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(p.offset);
        parts.push({ topic: t.name, partition: p.partitionIndex, offset });
      }
    }
    const results = await ctx.services.admin.logs.deleteRecordsOf(parts, Math.max(0, req.timeoutMs));
    // Assembled in slices: one request may name 100,000 partitions.
    const slicer = new LoopSlicer();
    let next = 0;
    const topics = [];
    for (let ti = 0; ti < req.topics.length; ti++) {
      const t = req.topics[ti]!;
      topics.push({
        name: t.name,
        partitions: await mapInSlices(
          t.partitions,
          (p) => {
            if (!allowed[ti]) return { partitionIndex: p.partitionIndex, lowWatermark: -1n, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED };
            const r = results[next++]!;
            return { partitionIndex: p.partitionIndex, lowWatermark: BigInt(r.lowWatermark), errorCode: r.errorCode };
          },
          slicer,
        ),
      });
    }
    return { throttleTimeMs: 0, topics };
  },
});
