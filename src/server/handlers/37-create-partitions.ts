import { CreatePartitionsRequestCodec, CreatePartitionsResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { errorOutcome } from '../admin/index.js';
import type { CreationRequest } from '../admin/topic-admin.js';
import { AclOperation, ResourceType, resourceChecks } from './authz.js';
import { defineHandler } from './types.js';
import { NOT_CONTROLLER_MESSAGE, notController } from './control-request-common.js';
import { topicsNotServedInTime } from '../topic-creation.js';
import { LoopSlicer } from '../../common/slices.js';

/** Kafka's check: ALTER on each topic. */
const may = resourceChecks({
  alterTopic: { resource: ResourceType.TOPIC, operation: AclOperation.ALTER },
});

export const createPartitionsHandler = defineHandler({
  apiKey: 37,
  request: CreatePartitionsRequestCodec,
  response: CreatePartitionsResponseCodec,
  minVersion: 0,
  maxVersion: 3,
  slicedField: 'results',
  authorize: { resources: may },
  async handle(req, ctx) {
    const startedAt = Date.now();
    const { admin } = ctx.services;
    const counts = new Map<string, number>();
    for (const t of req.topics) counts.set(t.name, (counts.get(t.name) ?? 0) + 1);
    const results: { name: string; errorCode: number; errorMessage: string | null }[] = [];
    // Names answered so far: a lookup, not a scan of the results per topic (50,000 names).
    const answered = new Set<string>();
    const firstTime = (name: string): boolean => !answered.has(name) && answered.add(name).size > 0;
    if (notController(ctx)) {
      for (const t of req.topics)
        if (firstTime(t.name)) results.push({ name: t.name, errorCode: ErrorCode.NOT_CONTROLLER, errorMessage: NOT_CONTROLLER_MESSAGE });
      return { throttleTimeMs: 0, results };
    }
    // New partitions the whole request asks for, against max.partitions.per.request.
    let planned = 0;
    for (const t of req.topics) planned += Math.max(0, t.count - (ctx.services.metadata.topic(t.name)?.partitions.length ?? t.count));
    try {
      admin.topics.checkRequestPartitions(planned);
    } catch (err) {
      const outcome = errorOutcome(err);
      for (const t of req.topics) if (firstTime(t.name)) results.push({ name: t.name, ...outcome });
      return { throttleTimeMs: 0, results };
    }
    const request: CreationRequest = { validatedPartitions: 0 };
    const slicer = new LoopSlicer();
    for (const t of req.topics) {
      // A refusal costs no I/O, so nothing else would let the event loop in between topics.
      await slicer.maybePause();
      if (counts.get(t.name)! > 1) {
        if (firstTime(t.name)) {
          results.push({ name: t.name, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Duplicate topic in request.' });
        }
        continue;
      }
      if (!may.alterTopic.allows(ctx, t.name)) {
        results.push({ name: t.name, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: 'Authorization failed.' });
        continue;
      }
      try {
        const assignments = t.assignments === null ? null : t.assignments.map((a) => a.brokerIds);
        await admin.topics.createPartitions(t.name, t.count, assignments, req.validateOnly, request);
        results.push({ name: t.name, errorCode: ErrorCode.NONE, errorMessage: null });
      } catch (err) {
        results.push({ name: t.name, ...errorOutcome(err) });
      }
    }
    // As CreateTopics: answered once the new partitions' leaders serve them, within timeout_ms.
    if (!req.validateOnly) {
      const late = await topicsNotServedInTime(
        ctx.services,
        results.filter((r) => r.errorCode === ErrorCode.NONE).map((r) => r.name),
        startedAt,
        req.timeoutMs,
      );
      for (const r of results) {
        const why = late.get(r.name);
        if (why !== undefined) Object.assign(r, { errorCode: ErrorCode.REQUEST_TIMED_OUT, errorMessage: why });
      }
    }
    return { throttleTimeMs: 0, results };
  },
});
