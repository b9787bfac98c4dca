/**
 * A `__consumer_offsets` partition as the coordinator runtime hosts it: its state
 * (GroupShardState) plus what loading and unloading start and end: the members' session
 * timers (classic and consumer groups) and offset expiry once loaded; the members parked in JoinGroup or SyncGroup are
 * answered NOT_COORDINATOR when the partition moves away.
 */
import { ErrorCode } from '../../protocol/errors.js';
import type { CoordinatorShard } from '../runtime/types.js';
import { joinError, syncError } from './classic-group.js';
import { GroupShardState } from './group-shard-state.js';
import { scheduleSessionTimeout } from './rebalance.js';
import { scheduleExpiry } from './expiry.js';
import type { CoordinatorRecord } from './records.js';
import { scheduleConsumerGroupTimers } from './consumer/membership.js';

export class GroupShard extends GroupShardState implements CoordinatorShard<CoordinatorRecord> {
  onLoaded(): void {
    for (const g of this.groups.values()) {
      for (const m of g.members.values()) scheduleSessionTimeout(this, g, m);
    }
    scheduleConsumerGroupTimers(this);
    scheduleExpiry(this);
  }

  onUnloaded(): void {
    for (const g of this.groups.values()) {
      for (const m of g.members.values()) {
        m.joinWaiter?.(joinError(ErrorCode.NOT_COORDINATOR, m.memberId));
        m.syncWaiter?.(syncError(ErrorCode.NOT_COORDINATOR));
        m.joinWaiter = null;
        m.syncWaiter = null;
      }
    }
  }
}
