/**
 * DescribeUserScramCredentials (50) and AlterUserScramCredentials (51), KIP-554: SCRAM users'
 * credentials, kept with the users' entity configs (src/security/sasl/scram-credentials.ts).
 */
import {
  AlterUserScramCredentialsRequestCodec,
  AlterUserScramCredentialsResponseCodec,
  DescribeUserScramCredentialsRequestCodec,
  DescribeUserScramCredentialsResponseCodec,
} from '../../protocol/messages/index.js';
import { alterUserScramCredentials, describeUserScramCredentials } from '../../security/sasl/scram-credentials.js';
import { defineHandler } from './types.js';
import { AclOperation } from './authz.js';
import { ErrorCode } from '../../protocol/errors.js';

export const describeUserScramCredentialsHandler = defineHandler({
  apiKey: 50,
  request: DescribeUserScramCredentialsRequestCodec,
  response: DescribeUserScramCredentialsResponseCodec,
  minVersion: 0,
  maxVersion: 0,
  // As Kafka: DESCRIBE on the cluster.
  authorize: {
    cluster: AclOperation.DESCRIBE,
    denied: () => ({ throttleTimeMs: 0, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: null, results: [] }),
  },
  handle(req, ctx) {
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
  // As Kafka: ALTER on the cluster, refused for every user named.
  authorize: {
    cluster: AclOperation.ALTER,
    denied(req) {
      const users = [...new Set([...req.deletions.map((d) => d.name), ...req.upsertions.map((u) => u.name)])];
      return { throttleTimeMs: 0, results: users.map((user) => ({ user, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: null })) };
    },
  },
  async handle(req, ctx) {
    const results = await alterUserScramCredentials(ctx.services.clientEntities, req.deletions, req.upsertions);
    return { throttleTimeMs: 0, results };
  },
});
