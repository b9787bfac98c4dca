/**
 * WriteTxnMarkers v0-v1: the transaction coordinator (of this broker or another) asks the
 * leaders of a transaction's partitions to write its commit or abort marker. Each partition is
 * answered on its own: fenced producer or coordinator epochs, NOT_LEADER_OR_FOLLOWER, unknown
 * partitions, or NONE once the ISR holds the marker (ReplicaManager.appendTxnMarker).
 */
import { WriteTxnMarkersRequestCodec, WriteTxnMarkersResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation } from './authz.js';
import { defineHandler } from './types.js';
import { LoopSlicer, allInSlices } from '../../common/slices.js';

export const writeTxnMarkersHandler = defineHandler({
  apiKey: 27,
  request: WriteTxnMarkersRequestCodec,
  response: WriteTxnMarkersResponseCodec,
  minVersion: 0,
  maxVersion: 1,
  slicedField: 'markers',
  // Sent by transaction coordinators: CLUSTER_ACTION on the cluster, else every partition CLUSTER_AUTHORIZATION_FAILED.
  authorize: {
    cluster: AclOperation.CLUSTER_ACTION,
    denied: (req) => ({
      markers: req.markers.map((m) => ({
        producerId: m.producerId,
        topics: m.topics.map((t) => ({
          name: t.name,
          partitions: t.partitionIndexes.map((partitionIndex) => ({ partitionIndex, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED })),
        })),
      })),
    }),
  },
  async handle(req, ctx) {
    const rm = ctx.services.replicaManager;
    // Started in slices: one request may name 100,000 partitions.
    const slicer = new LoopSlicer();
    const markers = await allInSlices(
      req.markers,
      async (m) => ({
        producerId: m.producerId,
        topics: await allInSlices(
          m.topics,
          async (t) => ({
            name: t.name,
            partitions: await allInSlices(
              t.partitionIndexes,
              async (partitionIndex) => ({
                partitionIndex,
                errorCode: await rm.appendTxnMarker(t.name, partitionIndex, {
                  producerId: m.producerId,
                  producerEpoch: m.producerEpoch,
                  coordinatorEpoch: m.coordinatorEpoch,
                  commit: m.transactionResult,
                }),
              }),
              slicer,
            ),
          }),
          slicer,
        ),
      }),
      slicer,
    );
    return { markers };
  },
});
