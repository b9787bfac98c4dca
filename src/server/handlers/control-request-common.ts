/**
 * What the three controller-to-broker handlers (LeaderAndIsr, StopReplica, UpdateMetadata)
 * share: the fencing header and the answer of a broker that is not in a ZooKeeper cluster.
 */
import { ZERO_UUID } from '../../protocol/primitives/index.js';
import { CloseConnectionError } from '../network/types.js';
import type { ClusterControl, ControlHeader } from '../broker-services.js';
import type { RequestContext } from './types.js';

/**
 * The cluster-mode receiver, or (embedded mode) a closed connection: these APIs are not
 * advertised there, as a Kafka broker outside a ZooKeeper cluster (KRaft) does not expose them,
 * and nothing a stray controller sends may touch the embedded store.
 */
export function clusterControlOf(ctx: RequestContext, api: string): ClusterControl {
  const control = ctx.services.clusterControl;
  if (!control) throw new CloseConnectionError(`${api} is only served by a broker in a ZooKeeper cluster (zookeeper.connect is not set)`);
  return control;
}

export function controlHeader(req: { controllerId: number; controllerEpoch: number; brokerEpoch: bigint }): ControlHeader {
  return { controllerId: req.controllerId, controllerEpoch: req.controllerEpoch, brokerEpoch: req.brokerEpoch };
}

/** A uuid field's value, undefined when the request carried none (older versions read the zero uuid). */
export function topicIdOrUndefined(id: string): string | undefined {
  return id === ZERO_UUID || id === '' ? undefined : id;
}

/**
 * Cluster mode: CreateTopics, DeleteTopics and CreatePartitions are the controller's to serve
 * (Kafka 2.x answers NOT_CONTROLLER elsewhere, and the admin client retries on the controller
 * that Metadata names). Always false in embedded mode, where the broker is its own controller.
 */
export function notController(ctx: RequestContext): boolean {
  const active = ctx.services.isActiveController;
  return active !== undefined && !active();
}

export const NOT_CONTROLLER_MESSAGE = 'This is not the correct controller for this cluster.';
