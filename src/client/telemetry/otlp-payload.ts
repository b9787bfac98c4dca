/**
 * A collected TelemetryBatch as the bytes of one PushTelemetry: OTLP MetricsData (one resource,
 * one scope), compressed with the first of the broker's accepted types this client can write
 * (KIP-714: the broker lists them in its order of preference; none accepted or none listed:
 * uncompressed).
 */
import { encodeMetricsData, type KeyValue, type Metric, type MetricsData, type NumberDataPoint } from '../../protocol/otlp/index.js';
import { CompressionType, compress, isKnownCompression } from '../../protocol/records/index.js';
import type { TelemetryBatch, TelemetryPoint } from './collector.js';
import type { Payload } from './telemetry-reporter.js';

const SCOPE = { name: 'fjord-client', version: '0.1.0' };

function nanos(ms: number): bigint {
  return BigInt(Math.round(ms)) * 1_000_000n;
}

function attributes(a: Record<string, string>): KeyValue[] {
  return Object.entries(a).map(([key, value]) => ({ key, value }));
}

export function toMetricsData(batch: TelemetryBatch, resource: Record<string, string>): MetricsData {
  const start = nanos(batch.startTimeMs);
  const time = nanos(batch.timeMs);
  const dataPoint = (p: TelemetryPoint, withStart: boolean): NumberDataPoint => ({
    attributes: attributes(p.attributes),
    startTimeUnixNano: withStart ? start : 0n,
    timeUnixNano: time,
    value: p.isInt ? BigInt(Math.round(p.value)) : p.value,
  });
  const metrics: Metric[] = batch.metrics.map((m) => ({
    name: m.name,
    description: m.description,
    unit: m.unit,
    data:
      m.kind === 'gauge'
        ? { type: 'gauge', dataPoints: m.points.map((p) => dataPoint(p, false)) }
        : {
            type: 'sum',
            dataPoints: m.points.map((p) => dataPoint(p, true)),
            aggregationTemporality: batch.deltaTemporality ? 'delta' : 'cumulative',
            isMonotonic: true,
          },
  }));
  return { resourceMetrics: [{ resource: { attributes: attributes(resource) }, scopeMetrics: [{ scope: SCOPE, metrics }] }] };
}

/** The first type in the broker's list that this client writes; None when there is none. */
export function chooseCompression(accepted: readonly number[]): CompressionType {
  for (const t of accepted) if (isKnownCompression(t)) return t;
  return CompressionType.None;
}

export function encodePayload(data: MetricsData, accepted: readonly number[]): Payload {
  const type = chooseCompression(accepted);
  const raw = encodeMetricsData(data);
  return { compressionType: type, metrics: type === CompressionType.None ? raw : compress(type, raw) };
}
