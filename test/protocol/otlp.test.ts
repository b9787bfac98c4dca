/**
 * OTLP MetricsData codec: round trips of every modelled kind (gauge, sum, histogram, every
 * attribute value type), a hand-made byte fixture for one gauge read from the protobuf spec's
 * field numbers, unknown kinds skipped, and garbage refused with OtlpDecodeError.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decodeMetricsData, encodeMetricsData, type MetricsData, OtlpDecodeError } from '../../src/protocol/otlp/index.js';

const NOW = 1_733_385_600_123_456_789n;

const FULL: MetricsData = {
  resourceMetrics: [
    {
      resource: {
        attributes: [
          { key: 'client_id', value: 'app-1' },
          { key: 'int', value: -42n },
          { key: 'double', value: 2.5 },
          { key: 'bool', value: true },
          { key: 'bytes', value: new Uint8Array([1, 2, 3]) },
          { key: 'array', value: ['a', 7n, false] },
          { key: 'kvlist', value: { kvlist: [{ key: 'inner', value: 'x' }] } },
          { key: 'unset', value: null },
        ],
      },
      schemaUrl: 'https://opentelemetry.io/schemas/1.24.0',
      scopeMetrics: [
        {
          scope: { name: 'org.apache.kafka', version: '4.0.0', attributes: [] },
          metrics: [
            {
              name: 'org.apache.kafka.producer.record.queue.time.avg',
              description: 'average queue time',
              unit: 'ms',
              data: {
                type: 'gauge',
                dataPoints: [{ attributes: [], startTimeUnixNano: 0n, timeUnixNano: NOW, value: 1.25 }],
              },
            },
            {
              name: 'org.apache.kafka.producer.node.request.latency.max',
              data: {
                type: 'sum',
                aggregationTemporality: 'cumulative',
                isMonotonic: true,
                dataPoints: [
                  {
                    attributes: [{ key: 'node_id', value: '1' }],
                    startTimeUnixNano: NOW - 1000n,
                    timeUnixNano: NOW,
                    value: 9_007_199_254_740_993n,
                  },
                  { attributes: [], startTimeUnixNano: 1n, timeUnixNano: 2n, value: -3n, flags: 1 },
                ],
              },
            },
            {
              name: 'delta.sum',
              data: {
                type: 'sum',
                aggregationTemporality: 'delta',
                isMonotonic: false,
                dataPoints: [{ attributes: [], startTimeUnixNano: 5n, timeUnixNano: 6n, value: 0 }],
              },
            },
            {
              name: 'latency',
              data: {
                type: 'histogram',
                aggregationTemporality: 'delta',
                dataPoints: [
                  {
                    attributes: [],
                    startTimeUnixNano: NOW - 5n,
                    timeUnixNano: 18_446_744_073_709_551_615n,
                    count: 6,
                    sum: 0,
                    bucketCounts: [1, 2, 3],
                    explicitBounds: [0.5, 10],
                    min: 0.1,
                    max: 99,
                  },
                ],
              },
            },
          ],
        },
      ],
    },
  ],
};

// One gauge "up", one point: time 1e9 ns, as_int 7, attribute k="v". Written field by field
// from opentelemetry-proto's numbers (tag = field << 3 | wire type), in field-number order.
const GAUGE_FIXTURE = Buffer.from(
  [
    '0a28', // MetricsData.resource_metrics (1, LEN 40)
    '1226', // ResourceMetrics.scope_metrics (2, LEN 38)
    '1224', // ScopeMetrics.metrics (2, LEN 36)
    '0a027570', // Metric.name (1) = "up"
    '2a1e', // Metric.gauge (5, LEN 30)
    '0a1c', // Gauge.data_points (1, LEN 28)
    '1900ca9a3b00000000', // NumberDataPoint.time_unix_nano (3, fixed64) = 1e9
    '310700000000000000', // NumberDataPoint.as_int (6, sfixed64) = 7
    '3a08', // NumberDataPoint.attributes (7, LEN 8)
    '0a016b', // KeyValue.key (1) = "k"
    '12030a0176', // KeyValue.value (2) = AnyValue.string_value (1) "v"
  ].join(''),
  'hex',
);

const GAUGE: MetricsData = {
  resourceMetrics: [
    {
      scopeMetrics: [
        {
          metrics: [
            {
              name: 'up',
              data: {
                type: 'gauge',
                dataPoints: [
                  {
                    attributes: [{ key: 'k', value: 'v' }],
                    startTimeUnixNano: 0n,
                    timeUnixNano: 1_000_000_000n,
                    value: 7n,
                  },
                ],
              },
            },
          ],
        },
      ],
    },
  ],
};

describe('OTLP MetricsData codec', () => {
  it('round-trips gauges, sums, histograms and every attribute value type', () => {
    const bytes = encodeMetricsData(FULL);
    assert.ok(Buffer.isBuffer(bytes));
    assert.deepEqual(decodeMetricsData(bytes), FULL);
  });

  it('round-trips an empty MetricsData to zero bytes', () => {
    const bytes = encodeMetricsData({ resourceMetrics: [] });
    assert.equal(bytes.length, 0);
    assert.deepEqual(decodeMetricsData(bytes), { resourceMetrics: [] });
  });

  it('decodes a hand-made gauge fixture and encodes the same bytes', () => {
    assert.deepEqual(decodeMetricsData(GAUGE_FIXTURE), GAUGE);
    assert.equal(encodeMetricsData(GAUGE).toString('hex'), GAUGE_FIXTURE.toString('hex'));
  });

  it('keeps a metric of an unmodelled kind (summary, field 11) with no data', () => {
    // MetricsData > ResourceMetrics.scope_metrics (2) > ScopeMetrics.metrics (2) >
    // Metric { name (1) = "s", summary (11, LEN 0) }.
    const fixed = Buffer.from('0a0912071205' + '0a0173' + '5a00', 'hex');
    assert.deepEqual(decodeMetricsData(fixed), {
      resourceMetrics: [{ scopeMetrics: [{ metrics: [{ name: 's', data: undefined }] }] }],
    });
  });

  it('refuses truncated bytes and invalid wire types with OtlpDecodeError', () => {
    assert.throws(() => decodeMetricsData(GAUGE_FIXTURE.subarray(0, 20)), {
      name: 'OtlpDecodeError',
      message: /^not an OTLP MetricsData message: /,
    });
    assert.throws(() => decodeMetricsData(Buffer.from('ffffffff', 'hex')), OtlpDecodeError);
    assert.throws(() => decodeMetricsData(Buffer.from('hello world garbage')), OtlpDecodeError);
  });
});
