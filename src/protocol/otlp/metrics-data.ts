/**
 * Encodes and decodes OTLP MetricsData (the payload of KIP-714's PushTelemetry) between bytes
 * and the plain types of types.ts. protobufjs does the wire work with schema.ts; this file maps
 * its message objects to and from our types: 64-bit values are written as decimal strings and
 * read from protobufjs's Long (or number) values exactly, proto3 defaults are left out on encode
 * and filled in on decode (a field is present when the decoded message has it as its own
 * property), and anything protobufjs rejects becomes one OtlpDecodeError.
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
    // The decoded message is read as it is (no toObject copy: that doubled the time of a 1 MB push).
    object = metricsDataType.decode(buf) as unknown as Wire;
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

/** Present on a decoded message: protobufjs sets decoded fields as own properties, defaults live on the prototype. */
function has(w: Wire, key: string): boolean {
  return Object.hasOwn(w, key) && w[key] !== null && w[key] !== undefined;
}

/** A 64-bit value as protobufjs decodes it: a Long (low, high, unsigned), or a number without long support. */
function int64(value: unknown): bigint {
  if (typeof value === 'number') return BigInt(Math.trunc(value));
  if (typeof value === 'string') return BigInt(value);
  if (value !== null && typeof value === 'object' && 'low' in value && 'high' in value) {
    const { low, high, unsigned } = value as { low: number; high: number; unsigned?: boolean };
    if (high === 0 && low >= 0) return BigInt(low);
    const bits = (BigInt(high >>> 0) << 32n) | BigInt(low >>> 0);
    return unsigned ? bits : BigInt.asIntN(64, bits);
  }
  return 0n;
}

function nanos(value: unknown): bigint {
  return int64(value);
}

function optionalNumber(w: Wire, key: string): number | undefined {
  return has(w, key) && typeof w[key] === 'number' ? (w[key] as number) : undefined;
}

function temporalityOf(value: unknown): AggregationTemporality {
  return TEMPORALITY[typeof value === 'number' ? value : 0] ?? 'unspecified';
}

// Built by assignment, not object spreads: a 1 MB push has tens of thousands of points.
type Mutable<T> = { -readonly [K in keyof T]: T[K] };

function resourceFromWire(w: Wire): ResourceMetrics {
  const out: Mutable<ResourceMetrics> = { scopeMetrics: list(w.scopeMetrics).map(scopeFromWire) };
  const resource = w.resource as Wire | null;
  if (resource) out.resource = { attributes: list(resource.attributes).map(keyValueFromWire) };
  const schemaUrl = optionalText(w.schemaUrl);
  if (schemaUrl !== undefined) out.schemaUrl = schemaUrl;
  return out;
}

function scopeFromWire(w: Wire): ScopeMetrics {
  const out: Mutable<ScopeMetrics> = { metrics: list(w.metrics).map(metricFromWire) };
  const scope = w.scope as Wire | null;
  if (scope) {
    const version = optionalText(scope.version);
    out.scope = { name: text(scope.name), ...(version !== undefined ? { version } : {}), attributes: list(scope.attributes).map(keyValueFromWire) };
  }
  const schemaUrl = optionalText(w.schemaUrl);
  if (schemaUrl !== undefined) out.schemaUrl = schemaUrl;
  return out;
}

function metricFromWire(w: Wire): Metric {
  const out: Mutable<Metric> = { name: text(w.name), data: undefined };
  const description = optionalText(w.description);
  if (description !== undefined) out.description = description;
  const unit = optionalText(w.unit);
  if (unit !== undefined) out.unit = unit;
  const gauge = w.gauge as Wire | null;
  const sum = w.sum as Wire | null;
  const histogram = w.histogram as Wire | null;
  if (gauge) out.data = { type: 'gauge', dataPoints: list(gauge.dataPoints).map(numberPointFromWire) };
  else if (sum) {
    out.data = {
      type: 'sum',
      dataPoints: list(sum.dataPoints).map(numberPointFromWire),
      aggregationTemporality: temporalityOf(sum.aggregationTemporality),
      isMonotonic: sum.isMonotonic === true,
    };
  } else if (histogram) {
    out.data = {
      type: 'histogram',
      dataPoints: list(histogram.dataPoints).map(histogramPointFromWire),
      aggregationTemporality: temporalityOf(histogram.aggregationTemporality),
    };
  }
  return out;
}

function numberPointFromWire(w: Wire): NumberDataPoint {
  const out: Mutable<NumberDataPoint> = {
    attributes: list(w.attributes).map(keyValueFromWire),
    startTimeUnixNano: nanos(w.startTimeUnixNano),
    timeUnixNano: nanos(w.timeUnixNano),
    value: has(w, 'asInt') ? int64(w.asInt) : (optionalNumber(w, 'asDouble') ?? 0),
  };
  if (typeof w.flags === 'number' && w.flags !== 0) out.flags = w.flags;
  return out;
}

function histogramPointFromWire(w: Wire): HistogramDataPoint {
  const out: Mutable<HistogramDataPoint> = {
    attributes: list(w.attributes).map(keyValueFromWire),
    startTimeUnixNano: nanos(w.startTimeUnixNano),
    timeUnixNano: nanos(w.timeUnixNano),
    count: Number(int64(w.count)),
    bucketCounts: (Array.isArray(w.bucketCounts) ? w.bucketCounts : []).map((n) => Number(int64(n))),
    explicitBounds: (Array.isArray(w.explicitBounds) ? w.explicitBounds : []).map((n) => Number(n)),
  };
  const sum = optionalNumber(w, 'sum');
  if (sum !== undefined) out.sum = sum;
  const min = optionalNumber(w, 'min');
  if (min !== undefined) out.min = min;
  const max = optionalNumber(w, 'max');
  if (max !== undefined) out.max = max;
  if (typeof w.flags === 'number' && w.flags !== 0) out.flags = w.flags;
  return out;
}

function keyValueFromWire(w: Wire): KeyValue {
  return { key: text(w.key), value: anyValueFromWire(w.value as Wire | undefined) };
}

function anyValueFromWire(w: Wire | undefined | null): AnyValue {
  if (!w) return null;
  if (has(w, 'stringValue')) return text(w.stringValue);
  if (has(w, 'boolValue')) return w.boolValue === true;
  if (has(w, 'intValue')) return int64(w.intValue);
  if (has(w, 'doubleValue')) return Number(w.doubleValue);
  // A copy, not protobufjs's Buffer view of the whole request.
  if (has(w, 'bytesValue') && w.bytesValue instanceof Uint8Array) return new Uint8Array(w.bytesValue);
  if (has(w, 'arrayValue')) return list((w.arrayValue as Wire).values).map(anyValueFromWire);
  if (has(w, 'kvlistValue')) return { kvlist: list((w.kvlistValue as Wire).values).map(keyValueFromWire) };
  return null;
}
