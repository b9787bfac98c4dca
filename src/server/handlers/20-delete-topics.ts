import { DeleteTopicsRequestCodec, DeleteTopicsResponseCodec } from '../../protocol/messages/index.js';
import type { DeletableTopicResult } from '../../protocol/messages/20-delete-topics.js';
import { ErrorCode } from '../../protocol/errors.js';
import { ZERO_UUID, type Input } from '../../protocol/primitives/index.js';
import { errorOutcome } from '../admin/index.js';
import { AclOperation, ResourceType, resourceChecks } from './authz.js';
import { defineHandler } from './types.js';
import { NOT_CONTROLLER_MESSAGE, notController } from './control-request-common.js';
import { LoopSlicer } from '../../common/slices.js';

/** Kafka's check: DELETE on each topic. */
const may = resourceChecks({
  deleteTopic: { resource: ResourceType.TOPIC, operation: AclOperation.DELETE },
});

export const deleteTopicsHandler = defineHandler({
  apiKey: 20,
  request: DeleteTopicsRequestCodec,
  response: DeleteTopicsResponseCodec,
  minVersion: 0,
  maxVersion: 6,
  slicedField: 'responses',
  authorize: { resources: may },
  async handle(req, ctx) {
    const { admin } = ctx.services;
    // v0-5 name topics in topicNames; v6 names or ids in topics.
    const refs =
      ctx.header.apiVersion >= 6
        ? req.topics.map((t) => ({ name: t.name, topicId: t.topicId === ZERO_UUID ? null : t.topicId }))
        : req.topicNames.map((name) => ({ name, topicId: null }));
    const responses: Input<DeletableTopicResult>[] = [];
    if (notController(ctx)) {
      for (const ref of refs)
        responses.push({ name: ref.name, topicId: ref.topicId ?? ZERO_UUID, errorCode: ErrorCode.NOT_CONTROLLER, errorMessage: NOT_CONTROLLER_MESSAGE });
      return { throttleTimeMs: 0, responses };
    }
    // Each topic once (clients key the answers by name), and in slices: a refusal costs no
    // I/O, so nothing else would let the event loop in between 100,000 names.
    const seen = new Set<string>();
    const slicer = new LoopSlicer();
    for (const ref of refs) {
      await slicer.maybePause();
      const key = `${ref.name ?? ''}/${ref.topicId ?? ''}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const base = { name: ref.name, topicId: ref.topicId ?? ZERO_UUID };
      if (ref.name !== null && ref.topicId !== null) {
        responses.push({ ...base, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'You may not specify both topic name and topic id.' });
        continue;
      }
      if (ref.name === null && ref.topicId === null) {
        responses.push({ ...base, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Neither topic name nor id were specified.' });
        continue;
      }
      // ACLs: DELETE on the topic (a topic id is resolved to its name first).
      const name = ref.name ?? (ref.topicId !== null ? ctx.services.metadata.topicById(ref.topicId)?.name : undefined);
      if (name !== undefined && !may.deleteTopic.allows(ctx, name)) {
        responses.push({ ...base, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, errorMessage: 'Authorization failed.' });
        continue;
      }
      try {
        const t = await admin.topics.deleteTopic(ref);
        responses.push({ name: t.name, topicId: t.topicId, errorCode: ErrorCode.NONE, errorMessage: null });
      } catch (err) {
        responses.push({ ...base, ...errorOutcome(err) });
      }
    }
    return { throttleTimeMs: 0, responses };
  },
});
