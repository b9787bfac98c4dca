/**
 * The protobuf schema of OTLP metrics, as a protobufjs JSON descriptor written from
 * opentelemetry-proto's `common/v1`, `resource/v1` and `metrics/v1` field numbers. Only the
 * messages KIP-714 needs: exponential histograms, summaries and exemplars are left out, and
 * protobufjs skips their fields on decode as it skips any unknown field.
 */
import protobuf from 'protobufjs/light.js';

const optionalDouble = (id: number) => ({ type: 'double', id, options: { proto3_optional: true } });

const DESCRIPTOR = {
  nested: {
    otlp: {
      nested: {
        AnyValue: {
          oneofs: {
            value: {
              oneof: ['stringValue', 'boolValue', 'intValue', 'doubleValue', 'arrayValue', 'kvlistValue', 'bytesValue'],
            },
          },
          fields: {
            stringValue: { type: 'string', id: 1 },
            boolValue: { type: 'bool', id: 2 },
            intValue: { type: 'int64', id: 3 },
            doubleValue: { type: 'double', id: 4 },
            arrayValue: { type: 'ArrayValue', id: 5 },
            kvlistValue: { type: 'KeyValueList', id: 6 },
            bytesValue: { type: 'bytes', id: 7 },
          },
        },
        ArrayValue: { fields: { values: { rule: 'repeated', type: 'AnyValue', id: 1 } } },
        KeyValueList: { fields: { values: { rule: 'repeated', type: 'KeyValue', id: 1 } } },
        KeyValue: {
          fields: { key: { type: 'string', id: 1 }, value: { type: 'AnyValue', id: 2 } },
        },
        InstrumentationScope: {
          fields: {
            name: { type: 'string', id: 1 },
            version: { type: 'string', id: 2 },
            attributes: { rule: 'repeated', type: 'KeyValue', id: 3 },
            droppedAttributesCount: { type: 'uint32', id: 4 },
          },
        },
        Resource: {
          fields: {
            attributes: { rule: 'repeated', type: 'KeyValue', id: 1 },
            droppedAttributesCount: { type: 'uint32', id: 2 },
          },
        },
        MetricsData: {
          fields: { resourceMetrics: { rule: 'repeated', type: 'ResourceMetrics', id: 1 } },
        },
        ResourceMetrics: {
          fields: {
            resource: { type: 'Resource', id: 1 },
            scopeMetrics: { rule: 'repeated', type: 'ScopeMetrics', id: 2 },
            schemaUrl: { type: 'string', id: 3 },
          },
        },
        ScopeMetrics: {
          fields: {
            scope: { type: 'InstrumentationScope', id: 1 },
            metrics: { rule: 'repeated', type: 'Metric', id: 2 },
            schemaUrl: { type: 'string', id: 3 },
          },
        },
        Metric: {
          oneofs: { data: { oneof: ['gauge', 'sum', 'histogram'] } },
          fields: {
            name: { type: 'string', id: 1 },
            description: { type: 'string', id: 2 },
            unit: { type: 'string', id: 3 },
            gauge: { type: 'Gauge', id: 5 },
            sum: { type: 'Sum', id: 7 },
            histogram: { type: 'Histogram', id: 9 },
          },
        },
        Gauge: { fields: { dataPoints: { rule: 'repeated', type: 'NumberDataPoint', id: 1 } } },
        Sum: {
          fields: {
            dataPoints: { rule: 'repeated', type: 'NumberDataPoint', id: 1 },
            aggregationTemporality: { type: 'int32', id: 2 },
            isMonotonic: { type: 'bool', id: 3 },
          },
        },
        Histogram: {
          fields: {
            dataPoints: { rule: 'repeated', type: 'HistogramDataPoint', id: 1 },
            aggregationTemporality: { type: 'int32', id: 2 },
          },
        },
        NumberDataPoint: {
          oneofs: { value: { oneof: ['asDouble', 'asInt'] } },
          fields: {
            attributes: { rule: 'repeated', type: 'KeyValue', id: 7 },
            startTimeUnixNano: { type: 'fixed64', id: 2 },
            timeUnixNano: { type: 'fixed64', id: 3 },
            asDouble: { type: 'double', id: 4 },
            asInt: { type: 'sfixed64', id: 6 },
            flags: { type: 'uint32', id: 8 },
          },
        },
        HistogramDataPoint: {
          oneofs: { _sum: { oneof: ['sum'] }, _min: { oneof: ['min'] }, _max: { oneof: ['max'] } },
          fields: {
            attributes: { rule: 'repeated', type: 'KeyValue', id: 9 },
            startTimeUnixNano: { type: 'fixed64', id: 2 },
            timeUnixNano: { type: 'fixed64', id: 3 },
            count: { type: 'fixed64', id: 4 },
            sum: optionalDouble(5),
            bucketCounts: { rule: 'repeated', type: 'fixed64', id: 6 },
            explicitBounds: { rule: 'repeated', type: 'double', id: 7 },
            flags: { type: 'uint32', id: 10 },
            min: optionalDouble(11),
            max: optionalDouble(12),
          },
        },
      },
    },
  },
};

/** The MetricsData message type, resolved once. */
export const metricsDataType: protobuf.Type = protobuf.Root.fromJSON(DESCRIPTOR).lookupType('otlp.MetricsData');
