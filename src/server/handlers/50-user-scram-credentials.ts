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

export const describeUserScramCredentialsHandler = defineHandler({
  apiKey: 50,
  request: DescribeUserScramCredentialsRequestCodec,
  response: DescribeUserScramCredentialsResponseCodec,
  minVersion: 0,
  maxVersion: 0,
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
  async handle(req, ctx) {
    const results = await alterUserScramCredentials(ctx.services.clientEntities, req.deletions, req.upsertions);
    return { throttleTimeMs: 0, results };
  },
});
