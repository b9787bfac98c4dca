/**
 * A group coordinator runtime over a MemoryLog, with helpers to build join/sync requests.
 */
import { CoordinatorRuntime } from '../../../src/coordinator/runtime/runtime.js';
import { GroupShard } from '../../../src/coordinator/group/group-shard.js';
import type { GroupCoordinatorConfig } from '../../../src/coordinator/group/config.js';
import { decodeRecord, encodeRecord, type CoordinatorRecord } from '../../../src/coordinator/group/records.js';
import type { JoinRequest } from '../../../src/coordinator/group/join-sync.js';
import { MemoryLog } from '../memory-log.js';

export const TEST_CONFIG: GroupCoordinatorConfig = {
  minSessionTimeoutMs: 10,
  maxSessionTimeoutMs: 600_000,
  initialRebalanceDelayMs: 0,
  maxGroupSize: 1000,
  offsetMetadataMaxBytes: 4096,
  offsetsRetentionMs: 7 * 24 * 3600_000,
  offsetsRetentionCheckIntervalMs: 600_000,
};

export interface Harness {
  log: MemoryLog;
  runtime: CoordinatorRuntime<GroupShard, CoordinatorRecord>;
  clock: { now: number };
  shard(): GroupShard;
}

export async function harness(cfg: Partial<GroupCoordinatorConfig> = {}, log = new MemoryLog(), clock = { now: 1_000_000 }): Promise<Harness> {
  let current: GroupShard | undefined;
  const runtime = new CoordinatorRuntime<GroupShard, CoordinatorRecord>({
    log,
    serde: { encode: encodeRecord, decode: decodeRecord },
    newShard: (ctx) => (current = new GroupShard(ctx, { ...TEST_CONFIG, ...cfg })),
    clock: () => clock.now,
  });
  await runtime.load(0);
  return { log, runtime, clock, shard: () => current! };
}

export function joinReq(over: Partial<JoinRequest> = {}): JoinRequest {
  return {
    groupId: 'g',
    memberId: '',
    groupInstanceId: null,
    sessionTimeoutMs: 30_000,
    rebalanceTimeoutMs: 60_000,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: Buffer.from('m') }],
    apiVersion: 9,
    clientId: 'c',
    clientHost: '/127.0.0.1',
    ...over,
  };
}
