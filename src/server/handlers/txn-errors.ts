/**
 * PRODUCER_FENCED (90) is newer than the first versions of the transactional APIs: older
 * versions get INVALID_PRODUCER_EPOCH instead, as Kafka answers them (InitProducerId below v4;
 * AddPartitionsToTxn, AddOffsetsToTxn and EndTxn below v2).
 */
import { ErrorCode } from '../../protocol/errors.js';

export function fencedForVersion(code: number, version: number, firstVersionWithProducerFenced: number): number {
  return code === ErrorCode.PRODUCER_FENCED && version < firstVersionWithProducerFenced ? ErrorCode.INVALID_PRODUCER_EPOCH : code;
}
