/**
 * Automatic topic creation, as Metadata and Produce trigger it: broker defaults for partitions
 * and replication, refused when `auto.create.topics.enable` is false or the name is illegal.
 *
 * The unknown topics one request names are created as one batch (issue 21: one request naming
 * 100,000 new topics used to create them one at a time, each rewriting the whole metadata file):
 * at most auto.create.topics.max.per.request of them, held to the same caps as CreateTopics
 * (max.partitions.per.request for the batch, then max.broker.partitions / max.partitions topic by
 * topic in request order), with one write of the metadata.
 */
import type { TopicInfo } from '../metadata/cluster-model.js';
import { INTERNAL_TOPICS } from '../metadata/cluster-model.js';
import { ErrorCode, KafkaError } from '../protocol/errors.js';
import type { BrokerServices } from './broker-services.js';
import type { PartitionRef } from './cluster/leader-readiness.js';
import { messageOf } from '../common/errors.js';

/**
 * Cluster mode: waits, for up to `timeoutMs`, until the leader of every partition of `topics`
 * serves it (has applied its LeaderAndIsr; server/cluster/leader-readiness.ts), so that a client
 * producing as soon as a topic is created is not answered "This server does not host this
 * topic-partition". Resolves with the partitions still not served; [] in embedded mode. Call it
 * once per request with every topic the request created (CreateTopics, CreatePartitions,
 * auto-creation): the leaders are asked together.
 */
export function partitionsNotServedWithin(services: BrokerServices, topics: readonly string[], timeoutMs: number): Promise<PartitionRef[]> {
  if (topics.length === 0 || !services.leaderReadiness) return Promise.resolve([]);
  return services.leaderReadiness.awaitServing(topics, timeoutMs);
}

/**
 * CreateTopics and CreatePartitions: the topics whose leaders did not serve them within the
 * request's `timeout_ms` (counted from `startedAt`), with the message of Kafka's
 * REQUEST_TIMED_OUT answer; the topics stay created. A timeout_ms of 0 or less is answered at
 * once, as Kafka does.
 */
export async function topicsNotServedInTime(
  services: BrokerServices,
  topics: readonly string[],
  startedAt: number,
  requestTimeoutMs: number,
): Promise<Map<string, string>> {
  const late = new Map<string, string>();
  if (requestTimeoutMs <= 0) return late;
  const notServed = await partitionsNotServedWithin(services, topics, startedAt + requestTimeoutMs - Date.now());
  const byTopic = new Map<string, number[]>();
  for (const p of notServed) {
    const list = byTopic.get(p.topic);
    if (list)
      list.push(p.partition); // in place: a copy per partition is quadratic
    else byTopic.set(p.topic, [p.partition]);
  }
  for (const [topic, partitions] of byTopic) {
    late.set(
      topic,
      `The request timed out: the leaders of ${topic} partitions [${partitions.sort((a, b) => a - b).join(', ')}] did not serve them within ${requestTimeoutMs} ms (they are created).`,
    );
  }
  return late;
}

/** Names a batch's log line lists. */
const LOGGED_NAMES = 20;

/** Each name's topic (created now, or by someone else meanwhile), or why it was not created. */
export type AutoCreated = Map<string, TopicInfo | KafkaError>;

export async function autoCreateTopic(services: BrokerServices, name: string): Promise<TopicInfo> {
  const outcome = (await autoCreateTopics(services, [name])).get(name)!;
  if (outcome instanceof KafkaError) throw outcome;
  return outcome;
}

export async function autoCreateTopics(services: BrokerServices, names: readonly string[]): Promise<AutoCreated> {
  const { config, metadata } = services;
  const out: AutoCreated = new Map();
  const wanted: string[] = [];
  for (const name of new Set(names)) {
    const existing = metadata.topic(name);
    if (existing) out.set(name, existing);
    else if (!config.autoCreateTopicsEnable || INTERNAL_TOPICS.has(name)) out.set(name, new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION));
    else wanted.push(name);
  }
  if (wanted.length === 0) return out;
  const live = metadata.brokers().length;
  // A cluster-mode broker knows the cluster only from the controller's UpdateMetadata: just
  // (re)started, its image has no broker and no topic yet, and every topic looks unknown. The
  // topic may well exist; the client retries, as Kafka answers a topic it cannot show yet.
  if (live === 0) {
    for (const name of wanted)
      out.set(name, new KafkaError(ErrorCode.LEADER_NOT_AVAILABLE, `this broker has no cluster metadata yet; topic ${name} cannot be shown or created`));
    return out;
  }
  // Beyond the per-request count: not created by this request. Kafka answers a topic whose
  // creation it does not start (one already in flight) UNKNOWN_TOPIC_OR_PARTITION, which
  // clients retry; the retry creates it.
  const batch = wanted.slice(0, config.autoCreateTopicsMaxPerRequest);
  if (wanted.length > batch.length) {
    const notNow = notCreatedNow(config.autoCreateTopicsMaxPerRequest);
    for (const name of wanted.slice(batch.length)) out.set(name, notNow);
  }
  if (batch.length === 0) return out;
  const numPartitions = config.numPartitions;
  const replicationFactor = Math.min(config.defaultReplicationFactor, live);
  const topics = services.admin.topics;
  try {
    // The batch as one CreateTopics: too many partitions in total refuse all of it.
    topics.checkRequestPartitions(batch.length * numPartitions);
  } catch (err) {
    for (const name of batch) out.set(name, asKafkaError(err));
    return out;
  }
  // Not behind CreateTopics' lock, which is held while a big topic's logs open: the caps are
  // checked and the batch indexed without a pause between (the embedded store indexes before
  // its first await), so nothing can slip in between. In cluster mode a topic shows only once
  // the controller confirms it, so requests running at once may each pass the caps, as before.
  const counts = topics.partitionCounts();
  let pending = 0;
  const specs: { name: string; numPartitions: number; replicationFactor: number }[] = [];
  for (const name of batch) {
    try {
      // Counted against max.broker.partitions / max.partitions like CreateTopics, in order.
      topics.checkPartitionCaps(numPartitions, pending, counts);
    } catch (err) {
      out.set(name, asKafkaError(err));
      continue;
    }
    pending += numPartitions;
    specs.push({ name, numPartitions, replicationFactor });
  }
  if (specs.length === 0) return out;
  const outcomes = await metadata.createTopics(specs);
  const created: string[] = [];
  specs.forEach((spec, i) => {
    const o = outcomes[i]!;
    if (!(o instanceof Error)) {
      created.push(spec.name);
      out.set(spec.name, o);
    } else if (o instanceof KafkaError && o.code === ErrorCode.TOPIC_ALREADY_EXISTS) {
      // Two requests racing to create the same topic: the loser sees it exists, which is fine.
      // In cluster mode the winner may be another broker whose topic this broker's image does
      // not show yet: the client gets Kafka's retriable answer for a topic still being created.
      out.set(spec.name, metadata.topic(spec.name) ?? new KafkaError(ErrorCode.LEADER_NOT_AVAILABLE, `topic ${spec.name} is being created`));
    } else {
      out.set(spec.name, asKafkaError(o));
    }
  });
  logCreated(services, created, numPartitions);
  // Answered once the leaders serve the new topics (cluster mode), asked together for the batch.
  const late = await partitionsNotServedWithin(services, created, config.requestTimeoutMs);
  for (const topic of new Set(late.map((p) => p.topic))) {
    out.set(topic, new KafkaError(ErrorCode.LEADER_NOT_AVAILABLE, `topic ${topic} is created; its leaders do not serve it yet`));
  }
  return out;
}

/** One line per batch (a line per topic would be a thousand lines for one request). */
function logCreated(services: BrokerServices, created: readonly string[], partitions: number): void {
  if (created.length === 1) {
    services.logger.info({ topic: created[0], partitions }, `created topic ${created[0]} with ${partitions} partition(s) (auto-created)`);
  } else if (created.length > 1) {
    const shown = created.slice(0, LOGGED_NAMES);
    const more = created.length > shown.length ? ` and ${created.length - shown.length} more` : '';
    services.logger.info(
      { topics: shown, count: created.length, partitions },
      `created ${created.length} topics with ${partitions} partition(s) each (auto-created): ${shown.join(', ')}${more}`,
    );
  }
}

/** The answer for new topics beyond the per-request count: one error shared by all of them. */
export function notCreatedNow(max: number): KafkaError {
  return new KafkaError(
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    `not auto-created: the request names more than auto.create.topics.max.per.request (${max}) new topics`,
  );
}

function asKafkaError(err: unknown): KafkaError {
  if (err instanceof KafkaError) return err;
  return new KafkaError(ErrorCode.UNKNOWN_SERVER_ERROR, messageOf(err));
}
