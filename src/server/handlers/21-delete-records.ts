import { DeleteRecordsRequestCodec, DeleteRecordsResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation, ResourceType, resourceChecks } from './authz.js';
import { defineHandler } from './types.js';
import { LoopSlicer, allInSlices } from '../../common/slices.js';

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
    const { logs } = ctx.services.admin;
    // Every partition is cut first, then they wait for their followers together (one timeout for the request).
    // Started in slices: one request may name 100,000 partitions.
    const slicer = new LoopSlicer();
    const topics = await allInSlices(
      req.topics,
      async (t) => ({
        name: t.name,
        partitions: await allInSlices(
          t.partitions,
          async (p) => {
            if (!may.deleteTopic.allows(ctx, t.name))
              return { partitionIndex: p.partitionIndex, lowWatermark: -1n, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED };
            // Offsets beyond 2^53 cannot be in any log; they land in OFFSET_OUT_OF_RANGE like any offset past the HW.
            const offset = p.offset > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(p.offset);
            const r = await logs.deleteRecords(t.name, p.partitionIndex, offset, Math.max(0, req.timeoutMs));
            return { partitionIndex: p.partitionIndex, lowWatermark: BigInt(r.lowWatermark), errorCode: r.errorCode };
          },
          slicer,
        ),
      }),
      slicer,
    );
    return { throttleTimeMs: 0, topics };
  },
});
