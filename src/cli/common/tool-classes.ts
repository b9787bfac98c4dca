/**
 * Kafka's tool classes, as `kafka-run-class.sh <class>` names them, and the Fjord tool
 * (src/cli/<tool>.ts, dist/cli/<tool>.js) that does the same job. Where Kafka moved a class
 * (kafka.admin.TopicCommand became org.apache.kafka.tools.TopicCommand, ...) both names are here,
 * since scripts and notes of every era still type the old one.
 */

/** The broker's class: kafka-run-class.sh runs it as kafka-server-start.sh. */
export const BROKER_CLASS = 'kafka.Kafka';

const table: [tool: string, classes: string[]][] = [
  ['kafka-get-offsets', ['kafka.tools.GetOffsetShell', 'org.apache.kafka.tools.GetOffsetShell']],
  ['kafka-consumer-groups', ['kafka.admin.ConsumerGroupCommand', 'org.apache.kafka.tools.consumer.group.ConsumerGroupCommand']],
  ['kafka-console-consumer', ['kafka.tools.ConsoleConsumer', 'org.apache.kafka.tools.consumer.ConsoleConsumer']],
  ['kafka-console-producer', ['kafka.tools.ConsoleProducer', 'org.apache.kafka.tools.ConsoleProducer']],
  ['kafka-topics', ['kafka.admin.TopicCommand', 'org.apache.kafka.tools.TopicCommand']],
  ['kafka-configs', ['kafka.admin.ConfigCommand', 'org.apache.kafka.tools.ConfigCommand']],
  ['kafka-acls', ['kafka.admin.AclCommand', 'org.apache.kafka.tools.AclCommand']],
  ['kafka-log-dirs', ['kafka.admin.LogDirsCommand', 'org.apache.kafka.tools.LogDirsCommand']],
  ['kafka-reassign-partitions', ['kafka.admin.ReassignPartitionsCommand', 'org.apache.kafka.tools.reassign.ReassignPartitionsCommand']],
  ['kafka-leader-election', ['kafka.admin.LeaderElectionCommand', 'org.apache.kafka.tools.LeaderElectionCommand']],
  ['kafka-preferred-replica-election', ['kafka.admin.PreferredReplicaLeaderElectionCommand']],
  ['kafka-delete-records', ['kafka.admin.DeleteRecordsCommand', 'org.apache.kafka.tools.DeleteRecordsCommand']],
  ['kafka-broker-api-versions', ['kafka.admin.BrokerApiVersionsCommand', 'org.apache.kafka.tools.BrokerApiVersionsCommand']],
  ['kafka-dump-log', ['kafka.tools.DumpLogSegments', 'org.apache.kafka.tools.DumpLogSegments']],
  ['kafka-producer-perf-test', ['kafka.tools.ProducerPerformance', 'org.apache.kafka.tools.ProducerPerformance']],
  ['kafka-consumer-perf-test', ['kafka.tools.ConsumerPerformance', 'org.apache.kafka.tools.ConsumerPerformance']],
  ['kafka-verifiable-producer', ['org.apache.kafka.tools.VerifiableProducer']],
  ['kafka-verifiable-consumer', ['org.apache.kafka.tools.VerifiableConsumer']],
  ['kafka-transactions', ['org.apache.kafka.tools.TransactionsCommand']],
  ['kafka-e2e-latency', ['kafka.tools.EndToEndLatency', 'org.apache.kafka.tools.EndToEndLatency']],
  ['kafka-replica-verification', ['kafka.tools.ReplicaVerificationTool', 'org.apache.kafka.tools.ReplicaVerificationTool']],
  ['kafka-mirror-maker', ['kafka.tools.MirrorMaker']],
  ['kafka-delegation-tokens', ['kafka.admin.DelegationTokenCommand', 'org.apache.kafka.tools.DelegationTokenCommand']],
  ['kafka-features', ['kafka.admin.FeatureCommand', 'org.apache.kafka.tools.FeatureCommand']],
  ['kafka-groups', ['org.apache.kafka.tools.GroupsCommand']],
];

/** Class name -> the Fjord tool's module name. */
export const TOOL_CLASSES: Readonly<Record<string, string>> = Object.fromEntries(table.flatMap(([tool, classes]) => classes.map((c) => [c, tool])));
