/**
 * Encodes and decodes OTLP MetricsData (the payload of KIP-714's PushTelemetry) between bytes
 * and the plain types of types.ts. protobufjs does the wire work with schema.ts; this file maps
 * its message objects to and from our types: 64-bit values travel as decimal strings (exact,
 * whatever Long support protobufjs finds), proto3 defaults are left out on encode and filled in
 * on decode, and anything protobufjs rejects becomes one OtlpDecodeError.
 */
import { metricsDataType } from './schema.js';
import type {
  AggregationTemporality,
  AnyValue,
  HistogramDataPoint,
  KeyValue,
  Metric,
  MetricsData,
  NumberDataPoint,
  ResourceMetrics,
  ScopeMetrics,
} from './types.js';

/** Thrown by decodeMetricsData on bytes that are not an OTLP MetricsData message. */
export class OtlpDecodeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OtlpDecodeError';
  }
}

// protobufjs's message objects, as far as this file reads and writes them.
type Wire = Record<string, unknown>;

const TEMPORALITY: readonly AggregationTemporality[] = ['unspecified', 'delta', 'cumulative'];

/** Encodes MetricsData as OTLP protobuf bytes. */
export function encodeMetricsData(data: MetricsData): Buffer {
  const message = { resourceMetrics: data.resourceMetrics.map(resourceToWire) };
  const bytes = metricsDataType.encode(message).finish();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Decodes OTLP protobuf bytes; throws OtlpDecodeError when they are not a MetricsData message. */
export function decodeMetricsData(buf: Uint8Array): MetricsData {
  let object: Wire;
  try {
    const message = metricsDataType.decode(buf);
    object = metricsDataType.toObject(message, { longs: String, arrays: true, oneofs: false }) as Wire;
  } catch (err) {
    // protobufjs throws RangeError (truncated), Error (bad wire type) or a stack overflow (nesting).
    const reason = err instanceof Error ? err.message : String(err);
    throw new OtlpDecodeError(`not an OTLP MetricsData message: ${reason}`);
  }
  return { resourceMetrics: list(object.resourceMetrics).map(resourceFromWire) };
}

// ---- to the wire ----

function withText(target: Wire, key: string, value: string | undefined): void {
  if (value !== undefined && value !== '') target[key] = value;
}

function resourceToWire(rm: ResourceMetrics): Wire {
  const out: Wire = { scopeMetrics: rm.scopeMetrics.map(scopeToWire) };
  if (rm.resource) out.resource = { attributes: rm.resource.attributes.map(keyValueToWire) };
  withText(out, 'schemaUrl', rm.schemaUrl);
  return out;
}

function scopeToWire(sm: ScopeMetrics): Wire {
  const out: Wire = { metrics: sm.metrics.map(metricToWire) };
  if (sm.scope) {
    const scope: Wire = { attributes: (sm.scope.attributes ?? []).map(keyValueToWire) };
    withText(scope, 'name', sm.scope.name);
    withText(scope, 'version', sm.scope.version);
    out.scope = scope;
  }
  withText(out, 'schemaUrl', sm.schemaUrl);
  return out;
}

function metricToWire(metric: Metric): Wire {
  const out: Wire = {};
  withText(out, 'name', metric.name);
  withText(out, 'description', metric.description);
  withText(out, 'unit', metric.unit);
  const data = metric.data;
  if (data?.type === 'gauge') out.gauge = { dataPoints: data.dataPoints.map(numberPointToWire) };
  else if (data?.type === 'sum') {
    const sum: Wire = { dataPoints: data.dataPoints.map(numberPointToWire) };
    const temporality = TEMPORALITY.indexOf(data.aggregationTemporality);
    if (temporality > 0) sum.aggregationTemporality = temporality;
    if (data.isMonotonic) sum.isMonotonic = true;
    out.sum = sum;
  } else if (data?.type === 'histogram') {
    const histogram: Wire = { dataPoints: data.dataPoints.map(histogramPointToWire) };
    const temporality = TEMPORALITY.indexOf(data.aggregationTemporality);
    if (temporality > 0) histogram.aggregationTemporality = temporality;
    out.histogram = histogram;
  }
  return out;
}

function timesToWire(out: Wire, point: { startTimeUnixNano: bigint; timeUnixNano: bigint }): void {
  if (point.startTimeUnixNano !== 0n) out.startTimeUnixNano = point.startTimeUnixNano.toString();
  if (point.timeUnixNano !== 0n) out.timeUnixNano = point.timeUnixNano.toString();
}

function numberPointToWire(point: NumberDataPoint): Wire {
  const out: Wire = { attributes: point.attributes.map(keyValueToWire) };
  timesToWire(out, point);
  if (typeof point.value === 'bigint') out.asInt = point.value.toString();
  else out.asDouble = point.value;
  if (point.flags) out.flags = point.flags;
  return out;
}

function histogramPointToWire(point: HistogramDataPoint): Wire {
  const out: Wire = {
    attributes: point.attributes.map(keyValueToWire),
    bucketCounts: point.bucketCounts.map((n) => String(n)),
    explicitBounds: [...point.explicitBounds],
  };
  timesToWire(out, point);
  if (point.count !== 0) out.count = String(point.count);
  if (point.sum !== undefined) out.sum = point.sum;
  if (point.min !== undefined) out.min = point.min;
  if (point.max !== undefined) out.max = point.max;
  if (point.flags) out.flags = point.flags;
  return out;
}

function keyValueToWire(kv: KeyValue): Wire {
  const out: Wire = { value: anyValueToWire(kv.value) };
  withText(out, 'key', kv.key);
  return out;
}

function anyValueToWire(value: AnyValue): Wire {
  if (value === null) return {};
  if (typeof value === 'string') return { stringValue: value };
  if (typeof value === 'boolean') return { boolValue: value };
  if (typeof value === 'number') return { doubleValue: value };
  if (typeof value === 'bigint') return { intValue: value.toString() };
  if (value instanceof Uint8Array) return { bytesValue: value };
  if (isAnyValueArray(value)) return { arrayValue: { values: value.map(anyValueToWire) } };
  return { kvlistValue: { values: value.kvlist.map(keyValueToWire) } };
}

function isAnyValueArray(value: AnyValue): value is readonly AnyValue[] {
  return Array.isArray(value);
}

// ---- from the wire ----

function list(value: unknown): Wire[] {
  return Array.isArray(value) ? (value as Wire[]) : [];
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

function optionalText(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function nanos(value: unknown): bigint {
  return typeof value === 'string' ? BigInt(value) : 0n;
}

function optionalNumber(value: unknown): number | undefined {
  return typeof value === 'number' ? value : undefined;
}

function temporalityOf(value: unknown): AggregationTemporality {
  return TEMPORALITY[typeof value === 'number' ? value : 0] ?? 'unspecified';
}

function resourceFromWire(w: Wire): ResourceMetrics {
  const resource = w.resource as Wire | undefined;
  return {
    ...(resource ? { resource: { attributes: list(resource.attributes).map(keyValueFromWire) } } : {}),
    scopeMetrics: list(w.scopeMetrics).map(scopeFromWire),
    ...(optionalText(w.schemaUrl) ? { schemaUrl: text(w.schemaUrl) } : {}),
  };
}

function scopeFromWire(w: Wire): ScopeMetrics {
  const scope = w.scope as Wire | undefined;
  return {
    ...(scope
      ? {
          scope: {
            name: text(scope.name),
            ...(optionalText(scope.version) ? { version: text(scope.version) } : {}),
            attributes: list(scope.attributes).map(keyValueFromWire),
          },
        }
      : {}),
    metrics: list(w.metrics).map(metricFromWire),
    ...(optionalText(w.schemaUrl) ? { schemaUrl: text(w.schemaUrl) } : {}),
  };
}

function metricFromWire(w: Wire): Metric {
  const base = {
    name: text(w.name),
    ...(optionalText(w.description) ? { description: text(w.description) } : {}),
    ...(optionalText(w.unit) ? { unit: text(w.unit) } : {}),
  };
  const gauge = w.gauge as Wire | undefined;
  const sum = w.sum as Wire | undefined;
  const histogram = w.histogram as Wire | undefined;
  if (gauge) return { ...base, data: { type: 'gauge', dataPoints: list(gauge.dataPoints).map(numberPointFromWire) } };
  if (sum) {
    return {
      ...base,
      data: {
        type: 'sum',
        dataPoints: list(sum.dataPoints).map(numberPointFromWire),
        aggregationTemporality: temporalityOf(sum.aggregationTemporality),
        isMonotonic: sum.isMonotonic === true,
      },
    };
  }
  if (histogram) {
    return {
      ...base,
      data: {
        type: 'histogram',
        dataPoints: list(histogram.dataPoints).map(histogramPointFromWire),
        aggregationTemporality: temporalityOf(histogram.aggregationTemporality),
      },
    };
  }
  return { ...base, data: undefined };
}

function numberPointFromWire(w: Wire): NumberDataPoint {
  const value = typeof w.asInt === 'string' ? BigInt(w.asInt) : (optionalNumber(w.asDouble) ?? 0);
  return {
    attributes: list(w.attributes).map(keyValueFromWire),
    startTimeUnixNano: nanos(w.startTimeUnixNano),
    timeUnixNano: nanos(w.timeUnixNano),
    value,
    ...(typeof w.flags === 'number' && w.flags !== 0 ? { flags: w.flags } : {}),
  };
}

function histogramPointFromWire(w: Wire): HistogramDataPoint {
  const sum = optionalNumber(w.sum);
  const min = optionalNumber(w.min);
  const max = optionalNumber(w.max);
  return {
    attributes: list(w.attributes).map(keyValueFromWire),
    startTimeUnixNano: nanos(w.startTimeUnixNano),
    timeUnixNano: nanos(w.timeUnixNano),
    count: typeof w.count === 'string' ? Number(w.count) : 0,
    ...(sum !== undefined ? { sum } : {}),
    bucketCounts: (Array.isArray(w.bucketCounts) ? w.bucketCounts : []).map((n) => Number(n)),
    explicitBounds: (Array.isArray(w.explicitBounds) ? w.explicitBounds : []).map((n) => Number(n)),
    ...(min !== undefined ? { min } : {}),
    ...(max !== undefined ? { max } : {}),
    ...(typeof w.flags === 'number' && w.flags !== 0 ? { flags: w.flags } : {}),
  };
}

function keyValueFromWire(w: Wire): KeyValue {
  return { key: text(w.key), value: anyValueFromWire(w.value as Wire | undefined) };
}

function anyValueFromWire(w: Wire | undefined): AnyValue {
  if (!w) return null;
  if (typeof w.stringValue === 'string') return w.stringValue;
  if (typeof w.boolValue === 'boolean') return w.boolValue;
  if (typeof w.intValue === 'string') return BigInt(w.intValue);
  if (typeof w.doubleValue === 'number') return w.doubleValue;
  // A copy, not protobufjs's Buffer view of the whole request.
  if (w.bytesValue instanceof Uint8Array) return new Uint8Array(w.bytesValue);
  const array = w.arrayValue as Wire | undefined;
  if (array) return list(array.values).map(anyValueFromWire);
  const kvlist = w.kvlistValue as Wire | undefined;
  if (kvlist) return { kvlist: list(kvlist.values).map(keyValueFromWire) };
  return null;
}
