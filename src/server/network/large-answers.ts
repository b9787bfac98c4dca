// Which requests can have an answer far larger than themselves: a few bytes ask for data (Fetch)
// or for "everything" (Metadata with no topic list, OffsetFetch with no topics, Describe* and List*
// of a whole cluster). A connection handles these one at a time, as Kafka handles every request,
// so a peer that pipelines them and reads nothing gets one answer built, not hundreds. Other
// requests (Produce above all) answer in proportion to what they send and stay pipelined.
//
// Only the API key is read (the first two bytes of a request frame); a frame that is not a request
// header (a raw SASL token) is simply not one of these.

const LARGE_ANSWER_API_KEYS: ReadonlySet<number> = new Set([
  1, // Fetch: up to fetch.max.bytes of records
  3, // Metadata: every topic when none is named
  9, // OffsetFetch: every offset of a group when no topic is named
  15, // DescribeGroups: members and their assignments
  16, // ListGroups
  29, // DescribeAcls
  32, // DescribeConfigs: every key of every resource named, with synonyms and docs
  35, // DescribeLogDirs: every partition of every directory
  41, // DescribeDelegationToken
  46, // ListPartitionReassignments
  48, // DescribeClientQuotas
  50, // DescribeUserScramCredentials
  61, // DescribeProducers
  65, // DescribeTransactions
  66, // ListTransactions
  69, // ConsumerGroupDescribe
  75, // DescribeTopicPartitions
]);

export function isLargeAnswerRequest(frame: Buffer): boolean {
  return frame.length >= 2 && LARGE_ANSWER_API_KEYS.has(frame.readInt16BE(0));
}
