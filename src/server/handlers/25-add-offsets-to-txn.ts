/**
 * AddOffsetsToTxn v0–v4: the `__consumer_offsets` partition of the group joins the transaction,
 * so its transactional offset commits get the transaction's marker.
 */
import { AddOffsetsToTxnRequestCodec, AddOffsetsToTxnResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation, ResourceType, resourceChecks } from './authz.js';
import { defineHandler } from './types.js';
import { fencedForVersion } from './txn-errors.js';

/** Kafka's checks: WRITE on the transactional id, then READ on the group. */
const may = resourceChecks({
  writeTransactionalId: { resource: ResourceType.TRANSACTIONAL_ID, operation: AclOperation.WRITE },
  readGroup: { resource: ResourceType.GROUP, operation: AclOperation.READ },
});

export const addOffsetsToTxnHandler = defineHandler({
  apiKey: 25,
  request: AddOffsetsToTxnRequestCodec,
  response: AddOffsetsToTxnResponseCodec,
  minVersion: 0,
  maxVersion: 4,
  authorize: { resources: may },
  async handle(req, ctx) {
    const { txnCoordinator, groupCoordinator } = ctx.services;
    if (!may.writeTransactionalId.allows(ctx, req.transactionalId)) return { throttleTimeMs: 0, errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED };
    if (!may.readGroup.allows(ctx, req.groupId)) return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED };
    const errorCode = await txnCoordinator.addOffsets({
      transactionalId: req.transactionalId,
      producerId: req.producerId,
      producerEpoch: req.producerEpoch,
      groupId: req.groupId,
      offsetsPartition: groupCoordinator.partitionFor(req.groupId),
    });
    return { throttleTimeMs: 0, errorCode: fencedForVersion(errorCode, ctx.header.apiVersion, 2) };
  },
});
