/**
 * WriteTxnMarkers v0-v1: the transaction coordinator (of this broker or another) asks the
 * leaders of a transaction's partitions to write its commit or abort marker. Each partition is
 * answered on its own: fenced producer or coordinator epochs, NOT_LEADER_OR_FOLLOWER, unknown
 * partitions, or NONE once the ISR holds the marker: one request to the partitions' owners
 * (replication/shards, over ReplicaManager.appendTxnMarker).
 */
import { WriteTxnMarkersRequestCodec, WriteTxnMarkersResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { AclOperation } from './authz.js';
import { defineHandler } from './types.js';
import type { TxnMarkerPart } from '../../replication/shards/partition-shards.js';
import { shardsOf } from '../broker-services.js';

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
    // One request to the partitions' owners: every marker of every transaction in it.
    const parts: TxnMarkerPart[] = [];
    for (const m of req.markers) {
      const marker = { producerId: m.producerId, producerEpoch: m.producerEpoch, coordinatorEpoch: m.coordinatorEpoch, commit: m.transactionResult };
      for (const t of m.topics) for (const partition of t.partitionIndexes) parts.push({ topic: t.name, partition, marker });
    }
    const codes = await shardsOf(ctx.services).writeTxnMarkers(parts);
    let next = 0;
    const markers = req.markers.map((m) => ({
      producerId: m.producerId,
      topics: m.topics.map((t) => ({
        name: t.name,
        partitions: t.partitionIndexes.map((partitionIndex) => ({ partitionIndex, errorCode: codes[next++]! })),
      })),
    }));
    return { markers };
  },
});
