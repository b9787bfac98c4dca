/**
 * OTLP metrics (OpenTelemetry protobuf) for KIP-714 client telemetry: the plain types and
 * encodeMetricsData / decodeMetricsData. The broker decodes what clients push; Fjord's client
 * encodes what it pushes.
 */
export { decodeMetricsData, encodeMetricsData, OtlpDecodeError } from './metrics-data.js';
export type * from './types.js';
