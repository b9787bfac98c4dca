/**
 * KIP-890 part 1: a broker asks the transaction coordinator of a transactional id whether the
 * producer's ongoing transaction holds some partitions before it writes to them transactionally
 * (TxnOffsetCommit's `__consumer_offsets` partition). The coordinator is the leader of the id's
 * `__transaction_state` partition: this broker's own TxnCoordinator when it leads it, otherwise
 * another broker, asked with AddPartitionsToTxn v4+ (verify_only, as a broker) over the
 * inter-broker listener, as Kafka's AddPartitionsToTxnManager does: per destination one request
 * in flight, the verifications arriving meanwhile sent together in the next one, and a second
 * verification of the same transactional id waiting for the same destination replacing the
 * first (which is answered NETWORK_EXCEPTION for the same epoch, INVALID_PRODUCER_EPOCH for an
 * older one; an older incoming one is answered INVALID_PRODUCER_EPOCH at once).
 *
 * The answers are Kafka's, per partition: NONE when verified; the coordinator's error otherwise,
 * with PRODUCER_FENCED as INVALID_PRODUCER_EPOCH and TRANSACTION_ABORTABLE as INVALID_TXN_STATE
 * (callers that may answer TRANSACTION_ABORTABLE convert back); COORDINATOR_NOT_AVAILABLE when
 * no broker leads the id's partition; NETWORK_EXCEPTION when the coordinator could not be asked
 * (or left a transaction out of its answer); a refused CLUSTER_ACTION as INVALID_TXN_STATE; and a
 * coordinator too old for verify_only (AddPartitionsToTxn below v4) verifies nothing.
 */
import type { Logger } from 'pino';
import type { ApiDef } from '../../client/apis.js';
import type { BrokerConnections } from '../../client/broker-connections.js';
import type { MetadataStore } from '../../metadata/metadata-store.js';
import * as m from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { messageOf } from '../../common/errors.js';
import type { TopicPartition, TxnProducer } from './operations.js';
import { TRANSACTION_STATE_TOPIC, type TxnCoordinator } from './txn-coordinator.js';

/** verify_only and the batched broker form start at v4. */
const ADD_PARTITIONS_TO_TXN: ApiDef<m.AddPartitionsToTxnRequest, m.AddPartitionsToTxnResponse> = {
  apiKey: 24,
  name: 'AddPartitionsToTxn',
  request: m.AddPartitionsToTxnRequestCodec,
  response: m.AddPartitionsToTxnResponseCodec,
  clientMax: 5,
};
const FIRST_VERIFY_VERSION = 4;

export type VerifyRequest = TxnProducer & { partitions: TopicPartition[] };

export interface PartitionVerdict extends TopicPartition {
  errorCode: number;
}

export interface TxnVerificationOptions {
  brokerId: number;
  metadata: MetadataStore;
  /** This broker's coordinator, asked directly for the ids whose partition it leads. */
  coordinator: TxnCoordinator;
  /** Cluster mode: connections to the other brokers. Absent (embedded): only this broker coordinates. */
  connections?: BrokerConnections;
  logger: Logger;
}

interface Waiting {
  req: VerifyRequest;
  resolve: (verdicts: PartitionVerdict[]) => void;
}

const all = (req: VerifyRequest, errorCode: number): PartitionVerdict[] => req.partitions.map((p) => ({ topic: p.topic, partition: p.partition, errorCode }));

/** Kafka's AddPartitionsToTxnManager: what a partition's answer means to the writer. */
function verdictCode(code: number): number {
  if (code === ErrorCode.PRODUCER_FENCED) return ErrorCode.INVALID_PRODUCER_EPOCH;
  if (code === ErrorCode.TRANSACTION_ABORTABLE) return ErrorCode.INVALID_TXN_STATE;
  return code;
}

export class TxnVerification {
  /** Per destination broker: verifications waiting for the next request, by transactional id. */
  private readonly waitingFor = new Map<number, Map<string, Waiting>>();
  private readonly inFlight = new Set<number>();

  constructor(private readonly opts: TxnVerificationOptions) {}

  /** One verdict per requested partition (never rejects). */
  async verify(req: VerifyRequest): Promise<PartitionVerdict[]> {
    const { metadata, coordinator, connections, brokerId } = this.opts;
    const index = coordinator.partitionFor(req.transactionalId);
    const leader = metadata.topic(TRANSACTION_STATE_TOPIC)?.partitions.find((p) => p.partition === index)?.leader ?? -1;
    if (leader < 0) return all(req, ErrorCode.COORDINATOR_NOT_AVAILABLE);
    if (leader === brokerId || !connections) {
      const r = await coordinator.verifyPartitions(req);
      return r.partitions.map((p) => ({
        topic: p.topic,
        partition: p.partition,
        errorCode: verdictCode(p.errorCode !== ErrorCode.NONE ? p.errorCode : r.errorCode),
      }));
    }
    return this.enqueue(leader, req);
  }

  /** Verifications waiting for the request after the one in flight to `brokerId` (tests, diagnostics). */
  waiting(brokerId: number): number {
    return this.waitingFor.get(brokerId)?.size ?? 0;
  }

  private enqueue(dest: number, req: VerifyRequest): Promise<PartitionVerdict[]> {
    let batch = this.waitingFor.get(dest);
    if (!batch) this.waitingFor.set(dest, (batch = new Map()));
    const earlier = batch.get(req.transactionalId);
    if (earlier) {
      // A newer epoch fences the earlier one; the same epoch is the client retrying.
      if (req.producerEpoch < earlier.req.producerEpoch) return Promise.resolve(all(req, ErrorCode.INVALID_PRODUCER_EPOCH));
      earlier.resolve(all(earlier.req, earlier.req.producerEpoch < req.producerEpoch ? ErrorCode.INVALID_PRODUCER_EPOCH : ErrorCode.NETWORK_EXCEPTION));
    }
    const answered = new Promise<PartitionVerdict[]>((resolve) => batch.set(req.transactionalId, { req, resolve }));
    if (!this.inFlight.has(dest)) void this.drain(dest);
    return answered;
  }

  /** Sends the waiting verifications to `dest`, one request at a time, until none is left. */
  private async drain(dest: number): Promise<void> {
    this.inFlight.add(dest);
    try {
      for (;;) {
        const batch = this.waitingFor.get(dest);
        if (!batch || batch.size === 0) return;
        this.waitingFor.delete(dest);
        const entries = [...batch.values()];
        const verdicts = await this.ask(
          dest,
          entries.map((e) => e.req),
        );
        entries.forEach((e, i) => e.resolve(verdicts[i]!));
      }
    } finally {
      this.inFlight.delete(dest);
    }
  }

  /** One AddPartitionsToTxn (verify_only) to `dest`: the verdicts of each request, in order. */
  private async ask(dest: number, reqs: readonly VerifyRequest[]): Promise<PartitionVerdict[][]> {
    const connections = this.opts.connections!;
    const fail = (code: number): PartitionVerdict[][] => reqs.map((r) => all(r, code));
    let res: m.AddPartitionsToTxnResponse;
    try {
      const conn = await connections.connection(dest);
      const version = conn.versionFor(ADD_PARTITIONS_TO_TXN);
      // Kafka goes on unverified when the coordinator's broker cannot verify (before v4).
      if (version === null || version < FIRST_VERIFY_VERSION) return fail(ErrorCode.NONE);
      res = await connections.send(
        dest,
        conn,
        ADD_PARTITIONS_TO_TXN,
        {
          transactions: reqs.map((r) => ({
            transactionalId: r.transactionalId,
            producerId: r.producerId,
            producerEpoch: r.producerEpoch,
            verifyOnly: true,
            topics: byTopic(r.partitions),
          })),
        },
        version,
      );
    } catch (err) {
      this.opts.logger.warn({ brokerId: dest, err: messageOf(err) }, 'transaction verification: AddPartitionsToTxn failed');
      return fail(ErrorCode.NETWORK_EXCEPTION);
    }
    if (res.errorCode !== ErrorCode.NONE) {
      this.opts.logger.warn({ brokerId: dest, errorCode: res.errorCode }, 'transaction verification: AddPartitionsToTxn refused');
      // The client must not see CLUSTER_AUTHORIZATION_FAILED for the broker's own request.
      return fail(res.errorCode === ErrorCode.CLUSTER_AUTHORIZATION_FAILED ? ErrorCode.INVALID_TXN_STATE : res.errorCode);
    }
    const codes = new Map<string, number>();
    for (const t of res.resultsByTransaction) {
      for (const topic of t.topicResults)
        for (const p of topic.resultsByPartition) codes.set(key(t.transactionalId, topic.name, p.partitionIndex), p.partitionErrorCode);
    }
    // A partition the answer leaves out was not verified: retriable, never taken as verified.
    return reqs.map((r) =>
      r.partitions.map((p) => ({ ...p, errorCode: verdictCode(codes.get(key(r.transactionalId, p.topic, p.partition)) ?? ErrorCode.NETWORK_EXCEPTION) })),
    );
  }
}

function key(transactionalId: string, topic: string, partition: number): string {
  return `${transactionalId}\u0000${topic}\u0000${partition}`;
}

function byTopic(partitions: readonly TopicPartition[]): { name: string; partitions: number[] }[] {
  const topics = new Map<string, number[]>();
  for (const p of partitions) {
    const list = topics.get(p.topic);
    if (list)
      list.push(p.partition); // in place: a copy per partition is quadratic
    else topics.set(p.topic, [p.partition]);
  }
  return [...topics].map(([name, ps]) => ({ name, partitions: ps }));
}
