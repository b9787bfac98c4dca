/**
 * The ZooKeeper-mode controller (Kafka's KafkaController and friends). Imports metadata,
 * protocol and client only. See kafka-controller.ts for the entry point.
 */
export { KafkaController, type ControllerHost, type ControllerMembership } from './kafka-controller.js';
export type { ControllerConfig } from './config.js';
export type { ControllerRequest, ControllerRequestSink } from './request-batch.js';
export { ControllerContext, parseTpKey, type TopicPartition } from './context.js';
