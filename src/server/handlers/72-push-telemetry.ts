/**
 * PushTelemetry v0 (KIP-714): a client's metrics as compressed OTLP, checked and kept for the
 * metrics endpoint (server/telemetry/client-instances.ts, pushed-metrics.ts).
 */
import { PushTelemetryRequestCodec, PushTelemetryResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { clientIdentity } from '../telemetry/client-identity.js';
import { defineHandler } from './types.js';

export const pushTelemetryHandler = defineHandler({
  apiKey: 72,
  request: PushTelemetryRequestCodec,
  response: PushTelemetryResponseCodec,
  minVersion: 0,
  maxVersion: 0,
  authorize: { none: 'as Kafka: every client may push its own telemetry' },
  async handle(req, ctx) {
    const telemetry = ctx.services.telemetry;
    if (telemetry === undefined) return { throttleTimeMs: 0, errorCode: ErrorCode.UNKNOWN_SERVER_ERROR };
    return { throttleTimeMs: 0, errorCode: await telemetry.push(req, clientIdentity(ctx)) };
  },
});
