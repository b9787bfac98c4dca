/**
 * KIP-890 part 1 on produce (Kafka 3.6+, `transaction.partition.verification.enable`): before a
 * leader appends a transactional producer's first batch of a transaction to a partition, it asks
 * the transaction coordinator whether that partition is part of the producer's ongoing
 * transaction (coordinator/txn/txn-verification.ts: this broker's coordinator in process, another
 * broker's with AddPartitionsToTxn v4+ verify_only). Not part of it: INVALID_TXN_STATE and nothing
 * written, so a late produce after an abort or a timeout cannot open a transaction that nobody
 * ends (a hanging transaction holding the last stable offset back). A batch is admitted without
 * asking when a guard of an earlier verification still holds, or when the log already has the
 * producer's transaction open; every admitted batch is checked again at its arrival turn
 * (replication/append/txn-verification-guards.ts), where a marker queued before it wins.
 *
 * Ordering: while a verification of a producer on a partition is in flight, a later batch of the
 * same producer to that partition waits for it, and the earlier one takes its arrival turn before
 * the later one is let go (`release`, called once the handler started that append; refused
 * partitions are let go at once), so it cannot overtake. A request waits only while it holds no verification of its own, so two requests never
 * wait for each other. Non-transactional produces never come here.
 */
import type { PartitionShards } from '../replication/shards/partition-shards.js';
import type { VerifiedTxnProducer } from '../replication/append/txn-verification-guards.js';
import type { TxnVerification } from '../coordinator/txn/txn-verification.js';
import { shardsOf, type BrokerServices } from './broker-services.js';
import type { BrokerReconfigurable } from './admin/config-admin.js';
import { ErrorCode, errorName } from '../protocol/errors.js';
import { ATTRIBUTES, ATTR_TRANSACTIONAL, MAGIC, PRODUCER_EPOCH, PRODUCER_ID, RECORD_BATCH_OVERHEAD } from '../protocol/records/batch-header.js';

/** What the handler does with one partition: append as verified, or answer the error. */
export type ProduceVerdict = { verifiedTxn: VerifiedTxnProducer } | { errorCode: number; errorMessage: string | null };

export interface ProduceAdmission {
  /** undefined: not a transactional batch this verification concerns; append as usual. */
  verdict(topic: string, partition: number): ProduceVerdict | undefined;
  /** Lets later batches of the producer to this partition go; call once its append was started (its arrival turn taken). */
  release(topic: string, partition: number): void;
  /** Lets every later batch go (idempotent): once the request's appends are done. */
  releaseAll(): void;
}

interface Candidate {
  topic: string;
  partition: number;
  producer: VerifiedTxnProducer;
  /** The leader epoch when its state was read: a verification's grant is as of it. */
  leaderEpoch: number;
}

/** The guards live with the partitions' owners (the shard that appends): asked and granted through the seam. */
export type TxnGuardOwners = Pick<PartitionShards, 'txnGuardStates' | 'grantTxnGuards'>;

/** Waiting rounds before a request verifies for itself rather than wait for others again. */
const MAX_WAIT_ROUNDS = 3;

/** The producer of a v2 transactional batch (the first of `records`), else undefined. */
export function transactionalProducerOf(records: Buffer | null): VerifiedTxnProducer | undefined {
  if (records === null || records.length < RECORD_BATCH_OVERHEAD || records[MAGIC] !== 2) return undefined;
  if ((records.readInt16BE(ATTRIBUTES) & ATTR_TRANSACTIONAL) === 0) return undefined;
  return { producerId: records.readBigInt64BE(PRODUCER_ID), producerEpoch: records.readInt16BE(PRODUCER_EPOCH) };
}

/**
 * What a producer is told when the coordinator could not confirm (Kafka's ReplicaManager for
 * Produce below v12): retriable coordinator troubles as NOT_ENOUGH_REPLICAS, which older
 * clients retry without a metadata refresh; INVALID_TXN_STATE with Kafka's message.
 */
export function produceVerdictError(code: number): { errorCode: number; errorMessage: string | null } {
  switch (code) {
    case ErrorCode.INVALID_TXN_STATE:
      return { errorCode: code, errorMessage: 'Partition was not added to the transaction' };
    case ErrorCode.NETWORK_EXCEPTION:
    case ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
    case ErrorCode.COORDINATOR_NOT_AVAILABLE:
    case ErrorCode.NOT_COORDINATOR:
    case ErrorCode.CONCURRENT_TRANSACTIONS:
      return {
        errorCode: ErrorCode.NOT_ENOUGH_REPLICAS,
        errorMessage: `Unable to verify the partition has been added to the transaction. Underlying error: ${errorName(code)}`,
      };
    default:
      return { errorCode: code, errorMessage: null };
  }
}

const VERIFICATION_KEY = 'transaction.partition.verification.enable';

export class ProduceTxnVerification implements BrokerReconfigurable {
  /** Per partition and producer id (flightKey): released once the verifying request has taken its arrival turn. */
  private readonly inFlight = new Map<string, Promise<void>>();
  /** transaction.partition.verification.enable (dynamic, as in Kafka). */
  enabled: boolean;

  constructor(
    private readonly verification: TxnVerification,
    private readonly owners: TxnGuardOwners,
    private readonly staticEnabled: boolean,
  ) {
    this.enabled = staticEnabled;
  }

  validate(): void {}

  /** The dynamic key (this broker's value over the cluster default over server.properties). */
  apply(layers: { perBroker: ReadonlyMap<string, string>; clusterDefault: ReadonlyMap<string, string> }): void {
    const value = layers.perBroker.get(VERIFICATION_KEY) ?? layers.clusterDefault.get(VERIFICATION_KEY);
    this.enabled = value === undefined ? this.staticEnabled : value.trim().toLowerCase() === 'true';
  }

  /**
   * The verdicts for a transactional produce's partitions (`skip`: partitions the handler will
   * not append, refused by ACLs). Undefined when verification is off.
   */
  async admit(
    transactionalId: string,
    topics: readonly { name: string; partitionData: readonly { index: number; records: Buffer | null }[] }[],
    skip: (topic: string) => boolean,
  ): Promise<ProduceAdmission | undefined> {
    if (!this.enabled) return undefined;
    let open: Candidate[] = [];
    for (const t of topics) {
      if (skip(t.name)) continue;
      for (const pd of t.partitionData) {
        const producer = transactionalProducerOf(pd.records);
        if (producer) open.push({ topic: t.name, partition: pd.index, producer, leaderEpoch: -1 });
      }
    }
    if (open.length === 0) return undefined;
    const verdicts = new Map<string, ProduceVerdict>();
    const mine = new Map<string, () => void>();
    const admitted = (c: Candidate): void => void verdicts.set(key(c.topic, c.partition), { verifiedTxn: c.producer });
    for (let round = 0; ; round++) {
      // Admitted at once (a guard, or the log's open transaction, on the owning shard), waiting
      // for another request's verification, or to verify. The owners answer in the order asked,
      // so a request that asked first marks its verification in flight before a later one looks.
      const states = await this.owners.txnGuardStates(open.map(({ topic, partition, producer }) => ({ topic, partition, producer })));
      const waits: Promise<void>[] = [];
      const toVerify: Candidate[] = [];
      open.forEach((c, i) => {
        const state = states[i]!;
        // No log here or not the leader: the append answers that, no verification needed.
        if (!state.leader) return;
        if (state.held) return admitted(c);
        const other = this.inFlight.get(flightKey(c.topic, c.partition, c.producer.producerId));
        if (other && round < MAX_WAIT_ROUNDS) waits.push(other);
        toVerify.push({ ...c, leaderEpoch: state.leaderEpoch });
      });
      if (waits.length === 0) {
        for (const c of toVerify) mine.set(key(c.topic, c.partition), this.markInFlight(flightKey(c.topic, c.partition, c.producer.producerId)));
        await this.verify(transactionalId, toVerify, verdicts);
        break;
      }
      // Holding nothing of its own while it waits: no two requests wait for each other.
      await Promise.all(waits);
      open = toVerify;
    }
    const release = (k: string): void => {
      mine.get(k)?.();
      mine.delete(k);
    };
    // Refused ones will not append: nothing to wait for.
    for (const [k, v] of verdicts) if ('errorCode' in v) release(k);
    return {
      verdict: (topic, partition) => verdicts.get(key(topic, partition)),
      release: (topic, partition) => release(key(topic, partition)),
      releaseAll: () => {
        for (const k of [...mine.keys()]) release(k);
      },
    };
  }

  /** Marks a verification of a producer on a partition (flightKey) in flight; returns its release. */
  private markInFlight(k: string): () => void {
    let release!: () => void;
    const done = new Promise<void>((resolve) => (release = resolve));
    this.inFlight.set(k, done);
    return () => {
      if (this.inFlight.get(k) === done) this.inFlight.delete(k);
      release();
    };
  }

  /** One verification per producer (a request's batches normally all come from one) for `cs`. */
  private async verify(transactionalId: string, cs: readonly Candidate[], verdicts: Map<string, ProduceVerdict>): Promise<void> {
    if (cs.length === 0) return;
    const byProducer = new Map<string, Candidate[]>();
    for (const c of cs) {
      const k = `${c.producer.producerId}:${c.producer.producerEpoch}`;
      const list = byProducer.get(k);
      if (list) list.push(c);
      else byProducer.set(k, [c]);
    }
    await Promise.all(
      [...byProducer.values()].map(async (list) => {
        const { producer } = list[0]!;
        const answers = await this.verification.verify({
          transactionalId,
          producerId: producer.producerId,
          producerEpoch: producer.producerEpoch,
          partitions: list.map((c) => ({ topic: c.topic, partition: c.partition })),
        });
        const codes = new Map(answers.map((a) => [key(a.topic, a.partition), a.errorCode]));
        const confirmed = list.filter((c) => (codes.get(key(c.topic, c.partition)) ?? ErrorCode.NETWORK_EXCEPTION) === ErrorCode.NONE);
        // Granted on the owning shard as of the leader epoch when asked (a leadership change meanwhile voids it), before the append is sent there.
        await this.owners.grantTxnGuards(confirmed.map(({ topic, partition, producer: p, leaderEpoch }) => ({ topic, partition, producer: p, leaderEpoch })));
        for (const c of list) {
          const code = codes.get(key(c.topic, c.partition)) ?? ErrorCode.NETWORK_EXCEPTION;
          verdicts.set(key(c.topic, c.partition), code === ErrorCode.NONE ? { verifiedTxn: c.producer } : produceVerdictError(code));
        }
      }),
    );
  }
}

const byBroker = new WeakMap<BrokerServices, ProduceTxnVerification>();

/**
 * The broker's produce verification, made on its first transactional produce (and following
 * dynamic changes of the key from then on; the dynamic configs stored before apply at once).
 */
export function produceVerificationOf(services: BrokerServices): ProduceTxnVerification {
  let v = byBroker.get(services);
  if (!v) {
    v = new ProduceTxnVerification(services.txnVerification, shardsOf(services), services.config.transactionPartitionVerificationEnable);
    byBroker.set(services, v);
    services.admin.configs.addReconfigurable(v);
  }
  return v;
}

function key(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

function flightKey(topic: string, partition: number, producerId: bigint): string {
  return `${topic}\u0000${partition}\u0000${producerId}`;
}
