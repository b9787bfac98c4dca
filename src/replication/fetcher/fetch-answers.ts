/**
 * What a follower does with the leader's answer for one partition: append the records and take
 * the leader's high watermark and log start, or, on OFFSET_OUT_OF_RANGE, learn where the
 * leader's log ends and starts and truncate to it (or start over at its start). Apart from
 * ReplicaFetcher's round (which sends the fetch and sorts the answers by error) because these
 * are the steps that write to the local log.
 */
import type { Logger } from 'pino';
import { KafkaStorageError } from '../../storage/errors.js';
import { messageOf } from '../../common/errors.js';
import { EMPTY, isCorrupt, wholeBatches, type PartitionFetchState } from './fetch-state.js';
import type { FetcherPartitions } from './fetcher-partitions.js';
import type { LeaderEndpoint, ReplicaFetchData, ReplicationTraffic } from './types.js';

/** What the answer handling uses of its replica fetcher. */
export interface FetcherView {
  readonly name: string;
  readonly leader: LeaderEndpoint;
  readonly partitions: FetcherPartitions;
  readonly logger: Logger;
  readonly traffic: ReplicationTraffic;
}

/**
 * A fetch answered without error: append the batches as the leader wrote them, then take its
 * high watermark and log start.
 */
export async function processPartitionData(f: FetcherView, st: PartitionFetchState, data: ReplicaFetchData, truncationOnFetch: boolean): Promise<void> {
  const records = wholeBatches(data.records ?? EMPTY);
  const replica = st.replica;
  try {
    if (records.length > 0) {
      if (st.fetchOffset !== replica.logEndOffset) {
        // Something else wrote to the log (a produce accepted just before this broker became a
        // follower). Kafka gives the partition up until the next LeaderAndIsr; here the data is
        // dropped and the fetch restarts from the log end, where last_fetched_epoch (or, with an
        // older leader, OffsetForLeaderEpoch) lets the leader say whether those records must go.
        f.logger.warn(
          { fetcher: f.name, partition: st.key, fetchOffset: st.fetchOffset, logEndOffset: replica.logEndOffset },
          'the log moved under the fetcher; fetching again from its end',
        );
        st.fetchOffset = replica.logEndOffset;
        st.lastFetchedEpoch = replica.latestEpoch();
        if (!truncationOnFetch) st.kind = 'truncating';
        return;
      }
      const r = await f.partitions.write(st, () => replica.appendAsFollower(records));
      if (!r.done) return;
      f.traffic.bytesIn += records.length;
    }
    replica.setFollowerHighWatermark(data.highWatermark);
    await f.partitions.write(st, () => replica.followLeaderLogStartOffset(data.logStartOffset));
  } catch (err) {
    if (err instanceof KafkaStorageError) f.partitions.writeFailed(st, 'storage error', err);
    else if (isCorrupt(err)) {
      f.logger.error({ fetcher: f.name, partition: st.key, offset: st.fetchOffset, err: messageOf(err) }, 'invalid records from the leader; backing off');
      f.partitions.delay([st]);
    } else f.partitions.markFailed(st, `append failed: ${messageOf(err)}`);
    return;
  }
  if (!f.partitions.isCurrent(st)) return;
  f.partitions.faults.wrote(st.key);
  if (records.length > 0) {
    st.fetchOffset = replica.logEndOffset;
    st.lastFetchedEpoch = replica.latestEpoch();
  }
  st.lag = Math.max(0, data.highWatermark - st.fetchOffset);
}

/** Kafka's fetchOffsetAndTruncate: our fetch offset is outside the leader's log. */
export async function handleOutOfRange(f: FetcherView, st: PartitionFetchState): Promise<boolean> {
  const { replica } = st;
  try {
    const leaderEnd = await f.leader.fetchOffset(replica.topic, replica.partition, st.currentLeaderEpoch, 'latest');
    if (!f.partitions.isCurrent(st)) return true;
    if (leaderEnd < replica.logEndOffset) {
      // The leader's log is shorter (an unclean election, or a leader without epochs): cut to it.
      if (!(await f.partitions.truncate(st, leaderEnd, `the leader's log ends at ${leaderEnd}`))) return true;
      f.partitions.afterTruncation(st, leaderEnd, true, true);
      return true;
    }
    const leaderStart = await f.leader.fetchOffset(replica.topic, replica.partition, st.currentLeaderEpoch, 'earliest');
    if (!f.partitions.isCurrent(st)) return true;
    if (leaderStart > replica.logEndOffset) {
      f.logger.warn(
        { fetcher: f.name, partition: st.key, logEndOffset: replica.logEndOffset, leaderStart },
        "the leader's log starts beyond ours: starting over at its start",
      );
      const r = await f.partitions.write(st, () => replica.truncateFullyAndStartAt(leaderStart));
      if (!r.done) return true;
    }
    f.partitions.afterTruncation(st, Math.max(leaderStart, replica.logEndOffset), true, true);
    return true;
  } catch (err) {
    if (err instanceof KafkaStorageError) {
      f.partitions.writeFailed(st, 'storage error', err);
      return true;
    }
    f.logger.warn({ fetcher: f.name, partition: st.key, err: messageOf(err) }, "cannot learn the leader's offsets after OFFSET_OUT_OF_RANGE; backing off");
    return false;
  }
}
