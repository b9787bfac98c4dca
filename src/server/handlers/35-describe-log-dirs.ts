import { DescribeLogDirsRequestCodec, DescribeLogDirsResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation } from './authz.js';
import { defineHandler } from './types.js';

export const describeLogDirsHandler = defineHandler({
  apiKey: 35,
  request: DescribeLogDirsRequestCodec,
  response: DescribeLogDirsResponseCodec,
  minVersion: 0,
  maxVersion: 4,
  // Kafka answers CLUSTER_AUTHORIZATION_FAILED with no dirs.
  authorize: { cluster: AclOperation.DESCRIBE, denied: () => ({ throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, results: [] }) },
  async handle(req, ctx) {
    const filter = req.topics === null ? null : new Map(req.topics.map((t) => [t.topic, new Set(t.partitions)] as const));
    const dirs = await ctx.services.admin.logs.describeLogDirs(filter);
    return {
      throttleTimeMs: 0,
      errorCode: ErrorCode.NONE,
      results: dirs.map((d) => ({
        errorCode: d.errorCode,
        logDir: d.dir,
        topics: d.topics.map((t) => ({
          name: t.name,
          partitions: t.partitions.map((p) => ({
            partitionIndex: p.partition,
            partitionSize: BigInt(p.size),
            offsetLag: BigInt(p.offsetLag),
            isFutureKey: false,
          })),
        })),
        totalBytes: BigInt(d.totalBytes),
        usableBytes: BigInt(d.usableBytes),
      })),
    };
  },
});
