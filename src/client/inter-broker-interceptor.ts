/**
 * A test seam on the broker-to-broker path: the controller's requests (LeaderAndIsr,
 * UpdateMetadata, StopReplica) and the replica fetchers' (Fetch, OffsetForLeaderEpoch,
 * ListOffsets) consult it, when one is given, just before a request goes on the wire. The broker
 * takes it as an option (never from configuration); with none, the senders skip the call.
 * An in-process harness (test/helpers/inproc/) uses it to drop, delay or hold a chosen API's
 * requests from one broker to another.
 */
export interface InterBrokerRequest {
  /** The sending broker. */
  from: number;
  /** The broker the request is for. */
  to: number;
  apiKey: number;
}

export interface InterBrokerInterceptor {
  /**
   * Called before each inter-broker request is sent. Resolving lets it go (after however long
   * the promise took: a delay or a hold); throwing or rejecting fails it as a broken connection
   * would (the sender closes the connection and retries after its backoff).
   */
  beforeSend(request: InterBrokerRequest): Promise<void> | void;
}
