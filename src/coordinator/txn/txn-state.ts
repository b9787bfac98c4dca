/**
 * A transactional id's state, as Kafka's TransactionMetadata: the producer id and epoch it owns,
 * the previous ones (for KIP-360 retries), its timeout, the partitions of the ongoing transaction,
 * and the state machine with its legal transitions as a table (Kafka's validPreviousStates).
 */

/** Kafka's TransactionState, with the ids it writes to `__transaction_state`. */
export const TxnState = {
  Empty: 0,
  Ongoing: 1,
  PrepareCommit: 2,
  PrepareAbort: 3,
  CompleteCommit: 4,
  CompleteAbort: 5,
  Dead: 6,
  PrepareEpochFence: 7,
} as const;
export type TxnStateValue = (typeof TxnState)[keyof typeof TxnState];

const NAMES: readonly string[] = ['Empty', 'Ongoing', 'PrepareCommit', 'PrepareAbort', 'CompleteCommit', 'CompleteAbort', 'Dead', 'PrepareEpochFence'];

/** The name Kafka's DescribeTransactions/ListTransactions and tools print. */
export function txnStateName(s: TxnStateValue): string {
  return NAMES[s]!;
}

export function txnStateByName(name: string): TxnStateValue | undefined {
  const i = NAMES.indexOf(name);
  return i < 0 ? undefined : (i as TxnStateValue);
}

export function txnStateFromId(id: number): TxnStateValue | undefined {
  return id >= 0 && id < NAMES.length ? (id as TxnStateValue) : undefined;
}

const S = TxnState;
/** Legal transitions: target state → the states it may be entered from. */
export const VALID_PREVIOUS_STATES: ReadonlyMap<TxnStateValue, ReadonlySet<TxnStateValue>> = new Map<TxnStateValue, ReadonlySet<TxnStateValue>>([
  [S.Empty, new Set([S.Empty, S.CompleteCommit, S.CompleteAbort])],
  [S.Ongoing, new Set([S.Ongoing, S.Empty, S.CompleteCommit, S.CompleteAbort])],
  [S.PrepareCommit, new Set([S.Ongoing])],
  [S.PrepareAbort, new Set([S.Ongoing, S.PrepareEpochFence])],
  [S.CompleteCommit, new Set([S.PrepareCommit])],
  [S.CompleteAbort, new Set([S.PrepareAbort])],
  [S.Dead, new Set([S.Empty, S.CompleteCommit, S.CompleteAbort])],
  [S.PrepareEpochFence, new Set([S.Ongoing])],
]);

export function canTransition(from: TxnStateValue, to: TxnStateValue): boolean {
  return VALID_PREVIOUS_STATES.get(to)?.has(from) ?? false;
}

export class IllegalTxnTransition extends Error {
  constructor(
    readonly transactionalId: string,
    readonly from: TxnStateValue,
    readonly to: TxnStateValue,
  ) {
    super(`transactional id ${transactionalId}: illegal transition ${txnStateName(from)} -> ${txnStateName(to)}`);
  }
}

export const NO_PRODUCER_ID = -1n;
export const NO_PRODUCER_EPOCH = -1;
/** Kafka bumps to a new producer id once the epoch would reach Short.MAX_VALUE. */
export const MAX_PRODUCER_EPOCH = 32767;

/** One transactional id's metadata; immutable snapshots (an operation builds the next one). */
export interface TxnMetadata {
  readonly transactionalId: string;
  readonly producerId: bigint;
  /** The producer id before the last rotation (epoch exhaustion); -1 when none (not in the v0 record). */
  readonly lastProducerId: bigint;
  readonly producerEpoch: number;
  /** The epoch before the last bump (in memory only, as Kafka: -1 after loading). */
  readonly lastProducerEpoch: number;
  readonly txnTimeoutMs: number;
  readonly state: TxnStateValue;
  /** topic → partitions of the ongoing (or completing) transaction. */
  readonly topicPartitions: ReadonlyMap<string, ReadonlySet<number>>;
  /** -1 when no transaction has started. */
  readonly txnStartTimestamp: number;
  readonly txnLastUpdateTimestamp: number;
}

/** The next state of `m`, checked against the transition table. */
export function transition(m: TxnMetadata, to: TxnStateValue, changes: Partial<Omit<TxnMetadata, 'transactionalId' | 'state'>>): TxnMetadata {
  if (!canTransition(m.state, to)) throw new IllegalTxnTransition(m.transactionalId, m.state, to);
  return { ...m, ...changes, state: to };
}

export function isEpochExhausted(epoch: number): boolean {
  return epoch >= MAX_PRODUCER_EPOCH - 1;
}

export function partitionCount(m: TxnMetadata): number {
  let n = 0;
  for (const ps of m.topicPartitions.values()) n += ps.size;
  return n;
}

export function hasPartition(m: TxnMetadata, topic: string, partition: number): boolean {
  return m.topicPartitions.get(topic)?.has(partition) ?? false;
}

export function withPartitions(m: TxnMetadata, add: readonly { topic: string; partition: number }[]): Map<string, Set<number>> {
  const out = new Map<string, Set<number>>();
  for (const [t, ps] of m.topicPartitions) out.set(t, new Set(ps));
  for (const { topic, partition } of add) {
    let s = out.get(topic);
    if (!s) out.set(topic, (s = new Set()));
    s.add(partition);
  }
  return out;
}

export function partitionList(m: TxnMetadata): { topic: string; partition: number }[] {
  const out: { topic: string; partition: number }[] = [];
  for (const [topic, ps] of m.topicPartitions) for (const partition of [...ps].sort((a, b) => a - b)) out.push({ topic, partition });
  return out;
}
