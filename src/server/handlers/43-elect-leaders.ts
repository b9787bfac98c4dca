/**
 * ElectLeaders (key 43, kafka-leader-election.sh): preferred (0) or unclean (1) leader election
 * for the listed partitions, or every partition when the list is null. Run by the controller
 * (services.controller); other brokers in cluster mode answer NOT_CONTROLLER, as Kafka. In
 * embedded mode the one broker already leads everything: ELECTION_NOT_NEEDED per known partition.
 * Versions: v0 is preferred only (no electionType, no top-level error code), v2 is flexible.
 */
import { ElectLeadersRequestCodec, ElectLeadersResponseCodec } from '../../protocol/messages/index.js';
import { ErrorCode, KafkaError, errorName } from '../../protocol/errors.js';
import { AclOperation } from './authz.js';
import { defineHandler } from './types.js';

const ELECTION_NOT_NEEDED = 84;

type Results = Map<string, Map<number, number>>;

function toResponse(results: Results, errorCode: number = ErrorCode.NONE) {
  return {
    throttleTimeMs: 0,
    errorCode,
    replicaElectionResults: [...results].map(([topic, ps]) => ({
      topic,
      partitionResult: [...ps].map(([partitionId, code]) => ({ partitionId, errorCode: code, errorMessage: code === ErrorCode.NONE ? null : errorName(code) })),
    })),
  };
}

export const electLeadersHandler = defineHandler({
  apiKey: 43,
  request: ElectLeadersRequestCodec,
  response: ElectLeadersResponseCodec,
  minVersion: 0,
  maxVersion: 2,
  // ALTER on the cluster, else every partition CLUSTER_AUTHORIZATION_FAILED.
  authorize: {
    cluster: AclOperation.ALTER,
    denied(req) {
      const results: Results = new Map();
      for (const t of req.topicPartitions ?? []) {
        const partitions = results.get(t.topic) ?? results.set(t.topic, new Map()).get(t.topic)!;
        for (const partition of t.partitions) partitions.set(partition, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
      }
      return toResponse(results, ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    },
  },
  async handle(req, ctx) {
    const { services } = ctx;
    const electionType = ctx.header.apiVersion >= 1 ? req.electionType : 0;
    const requested =
      req.topicPartitions === null ? null : req.topicPartitions.flatMap((t) => t.partitions.map((partition) => ({ topic: t.topic, partition })));
    const results: Results = new Map();
    const put = (topic: string, partition: number, code: number): void => {
      (results.get(topic) ?? results.set(topic, new Map()).get(topic)!).set(partition, code);
    };
    if (electionType !== 0 && electionType !== 1) {
      for (const tp of requested ?? []) put(tp.topic, tp.partition, ErrorCode.INVALID_REQUEST);
      return toResponse(results, ErrorCode.INVALID_REQUEST);
    }
    if (services.config.zookeeperConnect === null) {
      const all = requested ?? services.metadata.topics().flatMap((t) => t.partitions.map((_, partition) => ({ topic: t.name, partition })));
      for (const tp of all) {
        const known = (services.metadata.topic(tp.topic)?.partitions.length ?? 0) > tp.partition && tp.partition >= 0;
        put(tp.topic, tp.partition, known ? ELECTION_NOT_NEEDED : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION);
      }
      return toResponse(results);
    }
    const controller = services.controller;
    const notController = (): ReturnType<typeof toResponse> => {
      for (const tp of requested ?? []) put(tp.topic, tp.partition, ErrorCode.NOT_CONTROLLER);
      return toResponse(results, ErrorCode.NOT_CONTROLLER);
    };
    if (!controller?.isActive) return notController();
    try {
      const outcome = await controller.electLeaders(electionType, requested);
      for (const [key, code] of outcome) {
        const i = key.lastIndexOf('-');
        put(key.slice(0, i), Number(key.slice(i + 1)), code);
      }
      return toResponse(results);
    } catch (err) {
      if (err instanceof KafkaError && err.code === ErrorCode.NOT_CONTROLLER) return notController();
      throw err;
    }
  },
});
