import { DeleteRecordsRequestCodec, DeleteRecordsResponseCodec } from '../../protocol/messages/index.js';
import { defineHandler } from './types.js';

export const deleteRecordsHandler = defineHandler({
  apiKey: 21,
  request: DeleteRecordsRequestCodec,
  response: DeleteRecordsResponseCodec,
  minVersion: 0,
  maxVersion: 2,
  async handle(req, ctx) {
    const { logs } = ctx.services.admin;
    const topics = [];
    for (const t of req.topics) {
      const partitions = [];
      for (const p of t.partitions) {
        // Offsets beyond 2^53 cannot be in any log; they land in OFFSET_OUT_OF_RANGE like any offset past the HW.
        const offset = p.offset > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(p.offset);
        const r = await logs.deleteRecords(t.name, p.partitionIndex, offset);
        partitions.push({ partitionIndex: p.partitionIndex, lowWatermark: BigInt(r.lowWatermark), errorCode: r.errorCode });
      }
      topics.push({ name: t.name, partitions });
    }
    return { throttleTimeMs: 0, topics };
  },
});
