/**
 * DescribeUserScramCredentials (50) and AlterUserScramCredentials (51), KIP-554: SCRAM users'
 * credentials, kept with the users' entity configs (src/security/sasl/scram-credentials.ts).
 */
import {
  AlterUserScramCredentialsRequestCodec, AlterUserScramCredentialsResponseCodec,
  DescribeUserScramCredentialsRequestCodec, DescribeUserScramCredentialsResponseCodec,
} from '../../protocol/messages/index.js';
import { alterUserScramCredentials, describeUserScramCredentials } from '../../security/sasl/scram-credentials.js';
import { defineHandler } from './types.js';
import { AclOperation, authorizeCluster } from './authz.js';
import { ErrorCode } from '../../protocol/errors.js';

export const describeUserScramCredentialsHandler = defineHandler({
  apiKey: 50,
  request: DescribeUserScramCredentialsRequestCodec,
  response: DescribeUserScramCredentialsResponseCodec,
  minVersion: 0,
  maxVersion: 0,
  handle(req, ctx) {
    // As Kafka: DESCRIBE on the cluster.
    if (!authorizeCluster(ctx, AclOperation.DESCRIBE)) {
      return { throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: null, results: [] };
    }
    const results = describeUserScramCredentials(ctx.services.clientEntities, req.users === null ? null : req.users.map((u) => u.name));
    return { throttleTimeMs: 0, errorCode: 0, errorMessage: null, results };
  },
});

export const alterUserScramCredentialsHandler = defineHandler({
  apiKey: 51,
  request: AlterUserScramCredentialsRequestCodec,
  response: AlterUserScramCredentialsResponseCodec,
  minVersion: 0,
  maxVersion: 0,
  async handle(req, ctx) {
    // As Kafka: ALTER on the cluster, refused for every user named.
    if (!authorizeCluster(ctx, AclOperation.ALTER)) {
      const users = [...new Set([...req.deletions.map((d) => d.name), ...req.upsertions.map((u) => u.name)])];
      return { throttleTimeMs: 0, results: users.map((user) => ({ user, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: null })) };
    }
    const results = await alterUserScramCredentials(ctx.services.clientEntities, req.deletions, req.upsertions);
    return { throttleTimeMs: 0, results };
  },
});
