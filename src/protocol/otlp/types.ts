/**
 * Plain TypeScript shapes of OpenTelemetry's OTLP metrics (opentelemetry-proto `metrics/v1`),
 * the part KIP-714 clients push: resource -> scope -> metrics (gauge, sum, histogram) -> data
 * points. No protobufjs type appears here, so callers never depend on the wire library.
 * Timestamps are nanoseconds since the epoch as bigint (they exceed 2^53); counts are numbers
 * (exact up to 2^53, far beyond any client's counters).
 */

/** An attribute's value: string, bool, int (bigint), double (number), bytes, array, key-value list; null when unset. */
export type AnyValue = string | boolean | number | bigint | Uint8Array | readonly AnyValue[] | { readonly kvlist: readonly KeyValue[] } | null;

export interface KeyValue {
  readonly key: string;
  readonly value: AnyValue;
}

/** How a sum or histogram's values relate to time: since the previous point, or since start. */
export type AggregationTemporality = 'unspecified' | 'delta' | 'cumulative';

export interface NumberDataPoint {
  readonly attributes: readonly KeyValue[];
  readonly startTimeUnixNano: bigint;
  readonly timeUnixNano: bigint;
  /** number = OTLP's as_double, bigint = as_int (sfixed64). */
  readonly value: number | bigint;
  /** DataPointFlags; bit 0 = no recorded value. */
  readonly flags?: number;
}

export interface HistogramDataPoint {
  readonly attributes: readonly KeyValue[];
  readonly startTimeUnixNano: bigint;
  readonly timeUnixNano: bigint;
  readonly count: number;
  readonly sum?: number;
  /** One more than explicitBounds: (-inf, b0], (b0, b1], ..., (bn-1, +inf). */
  readonly bucketCounts: readonly number[];
  readonly explicitBounds: readonly number[];
  readonly min?: number;
  readonly max?: number;
  readonly flags?: number;
}

export interface Gauge {
  readonly type: 'gauge';
  readonly dataPoints: readonly NumberDataPoint[];
}

export interface Sum {
  readonly type: 'sum';
  readonly dataPoints: readonly NumberDataPoint[];
  readonly aggregationTemporality: AggregationTemporality;
  readonly isMonotonic: boolean;
}

export interface Histogram {
  readonly type: 'histogram';
  readonly dataPoints: readonly HistogramDataPoint[];
  readonly aggregationTemporality: AggregationTemporality;
}

export interface Metric {
  readonly name: string;
  readonly description?: string;
  readonly unit?: string;
  /** Undefined when the metric carries a kind this codec does not model (exponential histogram, summary). */
  readonly data: Gauge | Sum | Histogram | undefined;
}

export interface InstrumentationScope {
  readonly name: string;
  readonly version?: string;
  readonly attributes?: readonly KeyValue[];
}

export interface ScopeMetrics {
  readonly scope?: InstrumentationScope;
  readonly metrics: readonly Metric[];
  readonly schemaUrl?: string;
}

export interface Resource {
  readonly attributes: readonly KeyValue[];
}

export interface ResourceMetrics {
  readonly resource?: Resource;
  readonly scopeMetrics: readonly ScopeMetrics[];
  readonly schemaUrl?: string;
}

/** OTLP's MetricsData: what a PushTelemetry request's Metrics field holds (after decompression). */
export interface MetricsData {
  readonly resourceMetrics: readonly ResourceMetrics[];
}
