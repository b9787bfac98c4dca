/**
 * A restarted shard worker is re-sent its partitions' last LeaderAndIsr states (shard-roles.ts
 * `restarted`), which would let it lead again at the same leader epoch. Its logs were recovered
 * as after an unclean shutdown: recovery may have truncated a log below the high watermark it
 * had checkpointed, which followers already fetched and consumers may have read. Leading at the
 * old epoch from that shorter log would hand out those offsets again with other records; so such
 * a partition is not led again: it is answered KAFKA_STORAGE_ERROR (shard-roles.ts drops it from
 * the ledger: offline here until the broker restarts and the controller decides again).
 */
import { ErrorCode } from '../../../protocol/errors.js';
import { tpKey } from '../../../common/partition-keys.js';
import type { LeaderAndIsrPartition } from '../../hosting/role-changes.js';

/** What the check reads of a reopened log: its end and the high watermark checkpointed for it (undefined: not open / none). */
export interface ReopenedLogs {
  logEndOffset(topic: string, partition: number): number | undefined;
  checkpointedHighWatermark(topic: string, partition: number): number | undefined;
}

/** The re-sent states this broker may take up again, and the errors of those it may not (keyed by tpKey). */
export function resumableStates(
  states: readonly LeaderAndIsrPartition[],
  brokerId: number,
  logs: ReopenedLogs,
): { states: LeaderAndIsrPartition[]; refused: [string, number][] } {
  const out: LeaderAndIsrPartition[] = [];
  const refused: [string, number][] = [];
  for (const s of states) {
    const end = logs.logEndOffset(s.topic, s.partition);
    const hw = logs.checkpointedHighWatermark(s.topic, s.partition);
    if (s.leader === brokerId && end !== undefined && hw !== undefined && end < hw) refused.push([tpKey(s.topic, s.partition), ErrorCode.KAFKA_STORAGE_ERROR]);
    else out.push(s);
  }
  return { states: out, refused };
}
