/**
 * GetTelemetrySubscriptions v0 (KIP-714): a client asks which of its metrics to push, how often,
 * compressed how; a zero client instance id gets one assigned (server/telemetry/client-instances.ts).
 */
import { GetTelemetrySubscriptionsRequestCodec, GetTelemetrySubscriptionsResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { clientIdentity } from '../telemetry/client-identity.js';
import { defineHandler } from './types.js';

export const getTelemetrySubscriptionsHandler = defineHandler({
  apiKey: 71,
  request: GetTelemetrySubscriptionsRequestCodec,
  response: GetTelemetrySubscriptionsResponseCodec,
  minVersion: 0,
  maxVersion: 0,
  authorize: { none: 'as Kafka: every client may ask for its telemetry subscription' },
  handle(req, ctx) {
    const telemetry = ctx.services.telemetry;
    if (telemetry === undefined) return { throttleTimeMs: 0, errorCode: ErrorCode.UNKNOWN_SERVER_ERROR };
    return { throttleTimeMs: 0, ...telemetry.getSubscriptions(req.clientInstanceId, clientIdentity(ctx)) };
  },
});
