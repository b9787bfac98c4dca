/**
 * Broker topic metrics (Kafka's kafka.server:type=BrokerTopicMetrics meters) as the JMX
 * exporter's Kafka rules name them: kafka_server_brokertopicmetrics_<name>_total, per topic
 * (label topic) and for all topics (no label), read from BrokerTopicStats (topic-stats.ts) at
 * scrape. A deleted topic's series go with it.
 */
import type { MetadataStore } from '../../metadata/metadata-store.js';
import type { MetricsRegistry } from './registry.js';
import { type Sample, statsCounter } from './stats-families.js';
import type { BrokerTopicStats, TopicStats } from './topic-stats.js';

const FAMILIES: readonly [keyof TopicStats, string, string][] = [
  ['messagesIn', 'messagesin', 'Records appended by the leader for clients (MessagesInPerSec)'],
  ['bytesIn', 'bytesin', "Record bytes appended by the leader for clients' produce requests (BytesInPerSec)"],
  ['bytesOut', 'bytesout', 'Record bytes answered to consumers (BytesOutPerSec)'],
  ['bytesRejected', 'bytesrejected', 'Record bytes of produce requests the log refused as too large or invalid (BytesRejectedPerSec)'],
  ['failedProduceRequests', 'failedproducerequests', 'Partition appends that failed unexpectedly (FailedProduceRequestsPerSec)'],
  ['failedFetchRequests', 'failedfetchrequests', 'Partition reads that failed unexpectedly (FailedFetchRequestsPerSec)'],
  ['totalProduceRequests', 'totalproducerequests', 'Partition appends requested by clients (TotalProduceRequestsPerSec)'],
  ['totalFetchRequests', 'totalfetchrequests', 'Partition reads requested by consumers and followers (TotalFetchRequestsPerSec)'],
];

export function registerTopicMetrics(registry: MetricsRegistry, stats: BrokerTopicStats, metadata: Pick<MetadataStore, 'onChange' | 'topic'>): void {
  metadata.onChange((topic) => {
    if (metadata.topic(topic) === undefined) stats.remove(topic);
  });
  for (const [field, name, help] of FAMILIES) {
    statsCounter(registry, `kafka_server_brokertopicmetrics_${name}_total`, help, () => {
      const out: Sample[] = [{ value: stats.all[field], labels: {} }];
      for (const [topic, t] of stats.entries()) out.push({ value: t[field], labels: { topic } });
      return out;
    });
  }
  statsCounter(registry, 'kafka_server_brokertopicmetrics_replicationbytesout_total', 'Record bytes answered to followers (ReplicationBytesOutPerSec)', () => [
    { value: stats.all.replicationBytesOut, labels: {} },
  ]);
}
