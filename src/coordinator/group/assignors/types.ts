/**
 * The contract between the consumer group coordinator (KIP-848) and its server-side assignors
 * (`group.consumer.assignors`: uniform, range). An assignor is a pure function of the group's
 * members, their subscriptions and the subscribed topics' partition counts (and racks), and
 * returns every member's target assignment; the coordinator turns the difference between a
 * member's current and target assignment into incremental revocations and grants.
 */

/** A member as the assignor sees it. Topic ids are Kafka's printable (base64url) uuids. */
export interface AssignorMember {
  readonly memberId: string;
  readonly instanceId: string | null;
  readonly rackId: string | null;
  /** Topics this member subscribes to (names resolved to ids, regexes already expanded). */
  readonly subscribedTopicIds: ReadonlySet<string>;
  /** The member's previous target assignment (topic id -> partitions), for stickiness. */
  readonly currentTarget: ReadonlyMap<string, readonly number[]>;
}

/** A subscribed topic as the assignor sees it. */
export interface AssignorTopic {
  readonly topicId: string;
  readonly name: string;
  readonly partitionCount: number;
  /** The racks of a partition's replicas, for rack-aware assignment; empty when unknown. */
  partitionRacks(partition: number): readonly string[];
}

export interface AssignmentSpec {
  readonly members: ReadonlyMap<string, AssignorMember>;
  readonly topics: ReadonlyMap<string, AssignorTopic>;
  /** Homogeneous when every member subscribes to the same topics (assignors may take a faster path). */
  readonly subscriptionType: 'homogeneous' | 'heterogeneous';
}

/** Member id -> (topic id -> partitions). Every member of the spec has an entry, maybe empty. */
export type TargetAssignment = Map<string, Map<string, number[]>>;

/** Thrown by an assignor for a spec it cannot serve; the coordinator keeps the previous target. */
export class AssignorError extends Error {}

export interface ServerAssignor {
  /** The short name clients send in `ServerAssignor` and `group.consumer.assignors` lists. */
  readonly name: string;
  assign(spec: AssignmentSpec): TargetAssignment;
}
