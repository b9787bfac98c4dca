/**
 * The contract between the coordinator runtime and a coordinator's state machine, modelled on
 * Kafka's new coordinator runtime: an operation does no I/O, it returns the records to write and
 * the response; `replay` applies a record to memory, for live writes and for loading alike.
 */

/** Reverts what one `replay` did; the runtime calls it when the append of that record failed. */
export type Undo = () => void;

export interface OperationResult<T, R> {
  records: R[];
  response: T;
  /** Runs once the records are durable (at once when there are none). */
  onDurable?: () => void;
  /** Runs when the append failed; the records' replays have been undone already. */
  onFailed?: (err: unknown) => void;
  /**
   * Written as a transactional batch of this producer (TxnOffsetCommit): the records take effect
   * only when the transaction's COMMIT marker reaches the partition.
   */
  transactional?: TransactionalProducer;
}

export interface TransactionalProducer {
  producerId: bigint;
  producerEpoch: number;
}

/** The batch a record was read from while loading. */
export interface BatchContext {
  producerId: bigint;
  isTransactional: boolean;
}

/** A function the shard hands to the runtime to run later as an operation (a timer firing). */
export type TimerOperation<R> = (now: number) => OperationResult<void, R>;

/** What a shard may ask of the runtime while handling an operation: time and timers. */
export interface ShardContext<R> {
  readonly partition: number;
  now(): number;
  scheduleTimer(key: string, delayMs: number, op: TimerOperation<R>): void;
  cancelTimer(key: string): void;
  hasTimer(key: string): boolean;
}

export interface CoordinatorShard<R> {
  /** Applies one record to memory. `loading` is true while the partition is being replayed. */
  replay(record: R, loading: boolean): Undo | undefined;
  /** Called once the partition finished loading (start session timers, etc.). */
  onLoaded(): void;
  /** Called when the partition is unloaded (resign leadership, shutdown). */
  onUnloaded(): void;
  /**
   * A transaction marker of `producerId` in the partition: its transactional records take
   * effect (commit) or are dropped (abort). While loading it comes from the control batch; live,
   * from whoever wrote the marker (the partition's WriteTxnMarkers).
   */
  replayEndTransaction?(producerId: bigint, commit: boolean, loading: boolean): Undo | undefined;
}

export interface EncodedRecord {
  key: Buffer;
  value: Buffer | null;
}

export interface RecordSerde<R> {
  encode(r: R): EncodedRecord;
  /** null: a record type this coordinator ignores. `batch`: where it was read from (loading). */
  decode(key: Buffer, value: Buffer | null, batch?: BatchContext): R | null;
}

/**
 * Where a coordinator's records live: one partition of an internal topic. `append` resolves only
 * once the records are durable (acks=all); `replay` reads the partition from its start.
 */
export interface CoordinatorLog {
  /** With `producer`: one transactional batch of that producer (no sequence, as Kafka's coordinators). */
  append(partition: number, records: EncodedRecord[], now: number, producer?: TransactionalProducer): Promise<void>;
  /** Every keyed data record in order, and (when asked) every transaction marker. */
  replay(
    partition: number,
    onRecord: (key: Buffer, value: Buffer | null, batch?: BatchContext) => void,
    onMarker?: (producerId: bigint, commit: boolean) => void,
  ): Promise<void>;
}
