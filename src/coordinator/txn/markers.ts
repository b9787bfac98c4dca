/**
 * The seam between the transaction coordinator and the partitions: writing a transaction's
 * commit or abort markers. The coordinator retries until every partition succeeds (Kafka's
 * TransactionMarkerChannelManager); `WireTxnMarkerWriter` sends WriteTxnMarkers (API 27) to each
 * partition's leader over the inter-broker listener, this broker included, as Kafka does.
 */
import type { Connection } from '../../client/connection.js';
import { BrokerConnections } from '../../client/broker-connections.js';
import { Api } from '../../client/apis.js';
import { KafkaError as ClientKafkaError, UnsupportedApiError } from '../../client/errors.js';
import { ErrorCode } from '../../protocol/errors.js';
import type { MetadataStore } from '../../metadata/metadata-store.js';
import type { ClientSecurity } from '../../security/client-security.js';

export interface TxnMarkerPartition {
  topic: string;
  partition: number;
}

export interface TxnMarkerRequest {
  producerId: bigint;
  producerEpoch: number;
  /** The leader epoch of the coordinator's `__transaction_state` partition. */
  coordinatorEpoch: number;
  /** true: COMMIT markers; false: ABORT markers. */
  commit: boolean;
  partitions: readonly TxnMarkerPartition[];
}

export interface TxnMarkerResult extends TxnMarkerPartition {
  errorCode: number;
}

export interface TxnMarkerWriter {
  /**
   * Writes the markers; resolves with one result per requested partition (never rejects:
   * connection failures are reported as retriable codes).
   */
  writeMarkers(req: TxnMarkerRequest): Promise<TxnMarkerResult[]>;
  close(): void;
}

/** What the coordinator does with a partition's marker error (Kafka's completion handler). */
export type MarkerErrorAction = 'done' | 'retry' | 'drop-if-deleted' | 'fenced';

export function markerErrorAction(code: number): MarkerErrorAction {
  switch (code) {
    case ErrorCode.NONE:
      return 'done';
    // Kafka removes these partitions from the pending set as if written.
    case ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT:
      return 'done';
    case ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
      return 'drop-if-deleted';
    // A newer coordinator (or producer epoch) owns the transaction: stop sending.
    case ErrorCode.TRANSACTION_COORDINATOR_FENCED:
    case ErrorCode.INVALID_PRODUCER_EPOCH:
    case ErrorCode.PRODUCER_FENCED:
      return 'fenced';
    default:
      // NOT_LEADER_OR_FOLLOWER, NOT_ENOUGH_REPLICAS(_AFTER_APPEND), REQUEST_TIMED_OUT,
      // KAFKA_STORAGE_ERROR, network failures, a leader not serving WriteTxnMarkers yet...
      return 'retry';
  }
}

export interface WireTxnMarkerWriterOptions {
  /** This broker's id. */
  brokerId: number;
  metadata: MetadataStore;
  /** Where broker `id` listens for other brokers (this one included); undefined when not live. */
  endpoint(brokerId: number): { host: string; port: number } | undefined;
  clientId: string;
  requestTimeoutMs: number;
  /** TLS (and SASL) of the inter-broker listener, as a client; PLAINTEXT when absent. */
  security?: ClientSecurity;
}

/** One connection per leader broker, reopened on failure; requests per leader in parallel. */
export class WireTxnMarkerWriter implements TxnMarkerWriter {
  private readonly conns: BrokerConnections;

  constructor(private readonly opts: WireTxnMarkerWriterOptions) {
    this.conns = new BrokerConnections(opts);
  }

  async writeMarkers(req: TxnMarkerRequest): Promise<TxnMarkerResult[]> {
    const results: TxnMarkerResult[] = [];
    const byLeader = new Map<number, TxnMarkerPartition[]>();
    for (const p of req.partitions) {
      const info = this.opts.metadata.topic(p.topic);
      const ps = info?.partitions[p.partition];
      if (!info || !ps) results.push({ ...p, errorCode: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION });
      else if (ps.leader < 0) results.push({ ...p, errorCode: ErrorCode.NOT_LEADER_OR_FOLLOWER });
      else if (byLeader.has(ps.leader))
        byLeader.get(ps.leader)!.push(p); // in place, not a copy per partition
      else byLeader.set(ps.leader, [p]);
    }
    const sent = await Promise.all([...byLeader].map(([leader, parts]) => this.send(leader, req, parts)));
    return results.concat(...sent);
  }

  private async send(leader: number, req: TxnMarkerRequest, parts: TxnMarkerPartition[]): Promise<TxnMarkerResult[]> {
    const all = (errorCode: number): TxnMarkerResult[] => parts.map((p) => ({ ...p, errorCode }));
    let conn: Connection;
    try {
      conn = await this.conns.connection(leader);
    } catch {
      return all(ErrorCode.NETWORK_EXCEPTION);
    }
    const topics = new Map<string, number[]>();
    for (const p of parts) {
      const list = topics.get(p.topic);
      if (list) list.push(p.partition);
      else topics.set(p.topic, [p.partition]);
    }
    try {
      const res = await conn.send(Api.WriteTxnMarkers, {
        markers: [
          {
            producerId: req.producerId,
            producerEpoch: req.producerEpoch,
            transactionResult: req.commit,
            coordinatorEpoch: req.coordinatorEpoch,
            topics: [...topics].map(([name, partitionIndexes]) => ({ name, partitionIndexes })),
          },
        ],
      });
      const codes = new Map<string, number>();
      for (const m of res.markers) {
        if (m.producerId !== req.producerId) continue;
        for (const t of m.topics) for (const p of t.partitions) codes.set(`${t.name}\u0000${p.partitionIndex}`, p.errorCode);
      }
      // A partition the answer leaves out was not written: retried.
      return parts.map((p) => ({ ...p, errorCode: codes.get(`${p.topic}\u0000${p.partition}`) ?? ErrorCode.NETWORK_EXCEPTION }));
    } catch (err) {
      if (err instanceof UnsupportedApiError) return all(ErrorCode.UNSUPPORTED_VERSION);
      if (err instanceof ClientKafkaError) return all(err.code);
      conn.close(); // the next request opens a fresh one
      return all(ErrorCode.NETWORK_EXCEPTION);
    }
  }

  close(): void {
    this.conns.close();
  }
}
