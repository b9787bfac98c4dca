import { CreateTopicsRequestCodec, CreateTopicsResponseCodec } from '../../protocol/messages/index.js';
import type { CreatableTopicResult } from '../../protocol/messages/19-create-topics.js';
import { ErrorCode } from '../../protocol/errors.js';
import { ZERO_UUID, type Input } from '../../protocol/primitives/index.js';
import { errorOutcome } from '../admin/index.js';
import { plannedPartitions, type CreationRequest } from '../admin/topic-admin.js';
import { describeTopicConfigEntries } from '../admin/config-describer.js';
import { AclOperation, CLUSTER_NAME, ResourceType, resourceChecks } from './authz.js';
import { defineHandler } from './types.js';
import { NOT_CONTROLLER_MESSAGE, notController } from './control-request-common.js';
import { topicsNotServedInTime } from '../topic-creation.js';
import { LoopSlicer } from '../../common/slices.js';

/** Kafka's checks: CREATE on the cluster or on each topic; the new topic's configs only with DESCRIBE_CONFIGS on it. */
const may = resourceChecks({
  createTopics: { resource: ResourceType.CLUSTER, operation: AclOperation.CREATE },
  createTopic: { resource: ResourceType.TOPIC, operation: AclOperation.CREATE },
  describeTopicConfigs: { resource: ResourceType.TOPIC, operation: AclOperation.DESCRIBE_CONFIGS },
});

export const createTopicsHandler = defineHandler({
  apiKey: 19,
  request: CreateTopicsRequestCodec,
  response: CreateTopicsResponseCodec,
  minVersion: 0,
  maxVersion: 7,
  slicedField: 'topics',
  authorize: { resources: may },
  async handle(req, ctx) {
    const startedAt = Date.now();
    const { admin } = ctx.services;
    const counts = new Map<string, number>();
    for (const t of req.topics) counts.set(t.name, (counts.get(t.name) ?? 0) + 1);
    const results: Input<CreatableTopicResult>[] = [];
    // Names answered so far: a lookup, not a scan of the results per topic (50,000 names).
    const answered = new Set<string>();
    const firstTime = (name: string): boolean => !answered.has(name) && answered.add(name).size > 0;
    if (notController(ctx)) {
      for (const t of req.topics) if (firstTime(t.name)) results.push(failure(t.name, ErrorCode.NOT_CONTROLLER, NOT_CONTROLLER_MESSAGE));
      return { throttleTimeMs: 0, topics: results };
    }
    // Like Kafka's controller: a request planning too many partitions in total fails as a whole.
    const planned = req.topics.reduce((sum, t) => sum + plannedPartitions(t, ctx.services.config.numPartitions), 0);
    try {
      admin.topics.checkRequestPartitions(planned);
    } catch (err) {
      const { errorCode, errorMessage } = errorOutcome(err);
      for (const t of req.topics) if (firstTime(t.name)) results.push(failure(t.name, errorCode, errorMessage));
      return { throttleTimeMs: 0, topics: results };
    }
    const request: CreationRequest = { validatedPartitions: 0 };
    // Topics are created one after the other, in request order (a later one may collide with an earlier one).
    const slicer = new LoopSlicer();
    for (const t of req.topics) {
      // A refusal costs no I/O, so nothing else would let the event loop in between topics.
      await slicer.maybePause();
      if (counts.get(t.name)! > 1) {
        // Kafka answers each duplicated name once.
        if (!firstTime(t.name)) continue;
        results.push(failure(t.name, ErrorCode.INVALID_REQUEST, 'Found multiple entries for this topic.'));
        continue;
      }
      // ACLs: CREATE on the cluster or on the topic.
      if (!may.createTopics.allows(ctx, CLUSTER_NAME) && !may.createTopic.allows(ctx, t.name)) {
        results.push(failure(t.name, ErrorCode.TOPIC_AUTHORIZATION_FAILED, 'Authorization failed.'));
        continue;
      }
      try {
        const created = await admin.topics.createTopic(
          { name: t.name, numPartitions: t.numPartitions, replicationFactor: t.replicationFactor, assignments: t.assignments, configs: t.configs },
          req.validateOnly,
          request,
        );
        const layers = admin.dynamicConfigs.layers(ctx.services.config);
        // ACLs: the configs are answered only with DESCRIBE_CONFIGS on the topic (Kafka: topic_config_error_code).
        const configsAllowed = may.describeTopicConfigs.allows(ctx, t.name);
        results.push({
          topicConfigErrorCode: configsAllowed ? ErrorCode.NONE : ErrorCode.TOPIC_AUTHORIZATION_FAILED,
          name: t.name,
          topicId: created.topicId ?? ZERO_UUID,
          errorCode: ErrorCode.NONE,
          errorMessage: null,
          numPartitions: created.numPartitions,
          replicationFactor: created.replicationFactor,
          configs: !configsAllowed
            ? []
            : describeTopicConfigEntries(created.configs, layers, null).map((e) => ({
                name: e.name,
                value: e.value,
                readOnly: e.readOnly,
                configSource: e.source,
                isSensitive: e.sensitive,
              })),
        });
      } catch (err) {
        const { errorCode, errorMessage } = errorOutcome(err);
        results.push(failure(t.name, errorCode, errorMessage));
      }
    }
    // Answered once every new partition's leader serves it, within timeout_ms (Kafka waits for
    // this broker's metadata only: see server/cluster/leader-readiness.ts).
    if (!req.validateOnly) {
      const created = results.filter((r) => r.errorCode === ErrorCode.NONE).map((r) => r.name!);
      const late = await topicsNotServedInTime(ctx.services, created, startedAt, req.timeoutMs);
      for (const [i, r] of results.entries()) {
        const why = late.get(r.name!);
        if (why !== undefined) results[i] = failure(r.name!, ErrorCode.REQUEST_TIMED_OUT, why);
      }
    }
    return { throttleTimeMs: 0, topics: results };
  },
});

function failure(name: string, errorCode: number, errorMessage: string): Input<CreatableTopicResult> {
  return { name, topicId: ZERO_UUID, errorCode, errorMessage, numPartitions: -1, replicationFactor: -1, configs: [] };
}
