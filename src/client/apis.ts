/**
 * The APIs the client speaks, each with the highest version this client understands. The
 * connection picks min(our max, broker's max) per API after ApiVersions. Fetch stops at 12
 * because 13+ addresses topics by id only, and names are what the client deals in.
 */
import type { MessageCodec } from '../protocol/primitives/index.js';
import * as m from '../protocol/messages/index.js';

export interface ApiDef<Req, Resp> {
  readonly apiKey: number;
  readonly name: string;
  readonly request: MessageCodec<Req>;
  readonly response: MessageCodec<Resp>;
  /** Highest version the client code handles (<= the codec's). */
  readonly clientMax: number;
}

function api<Req, Resp>(apiKey: number, request: MessageCodec<Req>, response: MessageCodec<Resp>, clientMax = request.maxVersion): ApiDef<Req, Resp> {
  return { apiKey, name: request.name.replace(/Request$/, ''), request, response, clientMax };
}

export const Api = {
  Produce: api(0, m.ProduceRequestCodec, m.ProduceResponseCodec),
  Fetch: api(1, m.FetchRequestCodec, m.FetchResponseCodec, 12),
  ListOffsets: api(2, m.ListOffsetsRequestCodec, m.ListOffsetsResponseCodec),
  Metadata: api(3, m.MetadataRequestCodec, m.MetadataResponseCodec),
  OffsetCommit: api(8, m.OffsetCommitRequestCodec, m.OffsetCommitResponseCodec),
  OffsetFetch: api(9, m.OffsetFetchRequestCodec, m.OffsetFetchResponseCodec),
  FindCoordinator: api(10, m.FindCoordinatorRequestCodec, m.FindCoordinatorResponseCodec),
  JoinGroup: api(11, m.JoinGroupRequestCodec, m.JoinGroupResponseCodec),
  Heartbeat: api(12, m.HeartbeatRequestCodec, m.HeartbeatResponseCodec),
  LeaveGroup: api(13, m.LeaveGroupRequestCodec, m.LeaveGroupResponseCodec),
  SyncGroup: api(14, m.SyncGroupRequestCodec, m.SyncGroupResponseCodec),
  DescribeGroups: api(15, m.DescribeGroupsRequestCodec, m.DescribeGroupsResponseCodec),
  ConsumerGroupDescribe: api(69, m.ConsumerGroupDescribeRequestCodec, m.ConsumerGroupDescribeResponseCodec),
  ListGroups: api(16, m.ListGroupsRequestCodec, m.ListGroupsResponseCodec),
  ApiVersions: api(18, m.ApiVersionsRequestCodec, m.ApiVersionsResponseCodec),
  CreateTopics: api(19, m.CreateTopicsRequestCodec, m.CreateTopicsResponseCodec),
  DeleteTopics: api(20, m.DeleteTopicsRequestCodec, m.DeleteTopicsResponseCodec),
  DeleteRecords: api(21, m.DeleteRecordsRequestCodec, m.DeleteRecordsResponseCodec),
  OffsetForLeaderEpoch: api(23, m.OffsetForLeaderEpochRequestCodec, m.OffsetForLeaderEpochResponseCodec),
  InitProducerId: api(22, m.InitProducerIdRequestCodec, m.InitProducerIdResponseCodec),
  WriteTxnMarkers: api(27, m.WriteTxnMarkersRequestCodec, m.WriteTxnMarkersResponseCodec),
  DescribeAcls: api(29, m.DescribeAclsRequestCodec, m.DescribeAclsResponseCodec),
  CreateAcls: api(30, m.CreateAclsRequestCodec, m.CreateAclsResponseCodec),
  DeleteAcls: api(31, m.DeleteAclsRequestCodec, m.DeleteAclsResponseCodec),
  DescribeConfigs: api(32, m.DescribeConfigsRequestCodec, m.DescribeConfigsResponseCodec),
  AlterConfigs: api(33, m.AlterConfigsRequestCodec, m.AlterConfigsResponseCodec),
  DescribeLogDirs: api(35, m.DescribeLogDirsRequestCodec, m.DescribeLogDirsResponseCodec),
  CreatePartitions: api(37, m.CreatePartitionsRequestCodec, m.CreatePartitionsResponseCodec),
  DeleteGroups: api(42, m.DeleteGroupsRequestCodec, m.DeleteGroupsResponseCodec),
  IncrementalAlterConfigs: api(44, m.IncrementalAlterConfigsRequestCodec, m.IncrementalAlterConfigsResponseCodec),
  OffsetDelete: api(47, m.OffsetDeleteRequestCodec, m.OffsetDeleteResponseCodec),
  DescribeClientQuotas: api(48, m.DescribeClientQuotasRequestCodec, m.DescribeClientQuotasResponseCodec),
  AlterClientQuotas: api(49, m.AlterClientQuotasRequestCodec, m.AlterClientQuotasResponseCodec),
  UpdateFeatures: api(57, m.UpdateFeaturesRequestCodec, m.UpdateFeaturesResponseCodec),
  DescribeCluster: api(60, m.DescribeClusterRequestCodec, m.DescribeClusterResponseCodec),
  DescribeProducers: api(61, m.DescribeProducersRequestCodec, m.DescribeProducersResponseCodec),
  DescribeTransactions: api(65, m.DescribeTransactionsRequestCodec, m.DescribeTransactionsResponseCodec),
  ListTransactions: api(66, m.ListTransactionsRequestCodec, m.ListTransactionsResponseCodec),
  ConsumerGroupHeartbeat: api(68, m.ConsumerGroupHeartbeatRequestCodec, m.ConsumerGroupHeartbeatResponseCodec),
  DescribeTopicPartitions: api(75, m.DescribeTopicPartitionsRequestCodec, m.DescribeTopicPartitionsResponseCodec),
  // KIP-714 client telemetry (src/client/telemetry/) and its tool (kafka-client-metrics).
  GetTelemetrySubscriptions: api(71, m.GetTelemetrySubscriptionsRequestCodec, m.GetTelemetrySubscriptionsResponseCodec),
  PushTelemetry: api(72, m.PushTelemetryRequestCodec, m.PushTelemetryResponseCodec),
  ListClientMetricsResources: api(74, m.ListClientMetricsResourcesRequestCodec, m.ListClientMetricsResourcesResponseCodec),
  // SASL (src/client/sasl-client.ts) and SCRAM credentials (src/client/admin-scram.ts).
  SaslHandshake: api(17, m.SaslHandshakeRequestCodec, m.SaslHandshakeResponseCodec),
  SaslAuthenticate: api(36, m.SaslAuthenticateRequestCodec, m.SaslAuthenticateResponseCodec),
  DescribeUserScramCredentials: api(50, m.DescribeUserScramCredentialsRequestCodec, m.DescribeUserScramCredentialsResponseCodec),
  AlterUserScramCredentials: api(51, m.AlterUserScramCredentialsRequestCodec, m.AlterUserScramCredentialsResponseCodec),
  // Delegation tokens (src/client/admin-delegation-tokens.ts).
  CreateDelegationToken: api(38, m.CreateDelegationTokenRequestCodec, m.CreateDelegationTokenResponseCodec),
  RenewDelegationToken: api(39, m.RenewDelegationTokenRequestCodec, m.RenewDelegationTokenResponseCodec),
  ExpireDelegationToken: api(40, m.ExpireDelegationTokenRequestCodec, m.ExpireDelegationTokenResponseCodec),
  DescribeDelegationToken: api(41, m.DescribeDelegationTokenRequestCodec, m.DescribeDelegationTokenResponseCodec),
} as const;
