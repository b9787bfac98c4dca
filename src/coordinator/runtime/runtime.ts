/**
 * Runs a coordinator's shards (one per partition of its internal topic): executes operations
 * against in-memory state, appends their records, answers only once the records are durable,
 * and undoes the in-memory change when an append fails. Loading replays the partition through
 * the same `replay` the live path uses, while requests get COORDINATOR_LOAD_IN_PROGRESS.
 */
import { ErrorCode, KafkaError } from '../../protocol/errors.js';
import type { CoordinatorLog, CoordinatorShard, OperationResult, RecordSerde, ShardContext, TimerOperation, Undo } from './types.js';

interface PendingWrite<R> {
  records: R[];
  undos: Undo[];
  failed: boolean;
  onFailed?: (err: unknown) => void;
}

interface ShardSlot<S> {
  state: 'loading' | 'active' | 'unloaded';
  shard: S;
  /** Appends are chained so records reach the log in the order their operations ran. */
  tail: Promise<void>;
  pending: PendingWrite<unknown>[];
  timers: Map<string, NodeJS.Timeout>;
  loaded: Promise<void>;
}

export interface RuntimeOptions<S, R> {
  log: CoordinatorLog;
  serde: RecordSerde<R>;
  newShard(ctx: ShardContext<R>): S;
  clock?: () => number;
  onError?: (msg: string, err: unknown) => void;
  /**
   * An operation run once a partition has loaded, before anything else is served from it (its
   * records are replayed at once): repairs that depend on state outside the log, such as offsets
   * of topics deleted while the partition was not loaded.
   */
  afterLoad?: (shard: S, now: number) => OperationResult<void, R>;
}

export class CoordinatorRuntime<S extends CoordinatorShard<R>, R> {
  private readonly slots = new Map<number, ShardSlot<S>>();
  private readonly clock: () => number;

  constructor(private readonly opts: RuntimeOptions<S, R>) {
    this.clock = opts.clock ?? Date.now;
  }

  status(partition: number): 'active' | 'loading' | 'none' {
    const s = this.slots.get(partition);
    return s === undefined ? 'none' : s.state === 'unloaded' ? 'none' : s.state;
  }

  activePartitions(): number[] {
    return [...this.slots].filter(([, s]) => s.state === 'active').map(([p]) => p);
  }

  /** Partitions served or being loaded here (what leadership changes must unload). */
  hostedPartitions(): number[] {
    return [...this.slots.keys()];
  }

  /** Shards of every active partition (for cluster-wide reads such as ListGroups). */
  activeShards(): S[] {
    return [...this.slots.values()].filter((s) => s.state === 'active').map((s) => s.shard);
  }

  /** Partitions being loaded (replayed) here, for the metrics. */
  loadingCount(): number {
    let n = 0;
    for (const s of this.slots.values()) if (s.state === 'loading') n++;
    return n;
  }

  anyLoading(): boolean {
    return [...this.slots.values()].some((s) => s.state === 'loading');
  }

  /** Becomes the coordinator of `partition`: replays it, then serves it. Idempotent. */
  load(partition: number): Promise<void> {
    const existing = this.slots.get(partition);
    if (existing && existing.state !== 'unloaded') return existing.loaded;
    const slot = {
      state: 'loading',
      tail: Promise.resolve(),
      pending: [],
      timers: new Map(),
    } as unknown as ShardSlot<S>;
    slot.shard = this.opts.newShard(this.contextFor(partition, slot));
    this.slots.set(partition, slot);
    slot.loaded = (async () => {
      const { serde } = this.opts;
      await this.opts.log.replay(
        partition,
        (key, value, batch) => {
          const r = serde.decode(key, value, batch);
          if (r !== null) slot.shard.replay(r, true);
        },
        (producerId, commit) => slot.shard.replayEndTransaction?.(producerId, commit, true),
      );
      if (slot.state !== 'loading') return;
      slot.state = 'active';
      slot.shard.onLoaded();
      const afterLoad = this.opts.afterLoad;
      if (afterLoad) {
        this.commit(slot, partition, afterLoad(slot.shard, this.clock())).catch((err) =>
          this.opts.onError?.(`repair after loading coordinator partition ${partition} failed`, err),
        );
      }
    })();
    slot.loaded.catch((err) => {
      this.opts.onError?.(`loading coordinator partition ${partition} failed`, err);
      if (this.slots.get(partition) === slot) this.slots.delete(partition);
    });
    return slot.loaded;
  }

  unload(partition: number): void {
    const slot = this.slots.get(partition);
    if (!slot) return;
    slot.state = 'unloaded';
    for (const t of slot.timers.values()) clearTimeout(t);
    slot.timers.clear();
    this.slots.delete(partition);
    slot.shard.onUnloaded();
  }

  close(): void {
    for (const p of [...this.slots.keys()]) this.unload(p);
  }

  private activeSlot(partition: number): ShardSlot<S> {
    const slot = this.slots.get(partition);
    if (!slot || slot.state === 'unloaded') throw new KafkaError(ErrorCode.NOT_COORDINATOR);
    if (slot.state === 'loading') throw new KafkaError(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
    return slot;
  }

  /**
   * Runs `op` now against the shard, replays its records, appends them, and resolves with the
   * response once they are durable. Rejects (after undoing) if the append fails.
   */
  write<T>(partition: number, op: (shard: S, now: number) => OperationResult<T, R>): Promise<T> {
    const slot = this.activeSlot(partition);
    const result = op(slot.shard, this.clock());
    return this.commit(slot, partition, result);
  }

  /** Runs `fn` once every write issued before it is durable (or failed): reads see committed state. */
  async read<T>(partition: number, fn: (shard: S) => T): Promise<T> {
    const slot = this.activeSlot(partition);
    await slot.tail;
    if (slot.state !== 'active') throw new KafkaError(ErrorCode.NOT_COORDINATOR);
    return fn(slot.shard);
  }

  private commit<T>(slot: ShardSlot<S>, partition: number, result: OperationResult<T, R>): Promise<T> {
    if (result.records.length === 0) {
      result.onDurable?.();
      return Promise.resolve(result.response);
    }
    const undos: Undo[] = [];
    for (const r of result.records) {
      const u = slot.shard.replay(r, false);
      if (u) undos.push(u);
    }
    const entry: PendingWrite<unknown> = { records: result.records, undos, failed: false, onFailed: result.onFailed };
    slot.pending.push(entry);
    const encoded = result.records.map((r) => this.opts.serde.encode(r));
    const done = slot.tail.then(async () => {
      if (entry.failed) throw new KafkaError(ErrorCode.NOT_COORDINATOR, 'an earlier coordinator write failed');
      try {
        await this.opts.log.append(partition, encoded, this.clock(), result.transactional);
      } catch (err) {
        this.failFrom(slot, entry, err);
        throw err;
      }
      slot.pending.splice(slot.pending.indexOf(entry), 1);
    });
    slot.tail = done.catch(() => undefined);
    return done.then(
      () => {
        result.onDurable?.();
        return result.response;
      },
      (err: unknown) => {
        throw err instanceof KafkaError ? err : new KafkaError(ErrorCode.NOT_COORDINATOR, String(err));
      },
    );
  }

  /** Undoes `entry` and every write queued after it (they were computed on top of it), newest first. */
  private failFrom(slot: ShardSlot<S>, entry: PendingWrite<unknown>, err: unknown): void {
    const at = slot.pending.indexOf(entry);
    const failed = slot.pending.splice(at);
    for (let i = failed.length - 1; i >= 0; i--) {
      const w = failed[i]!;
      w.failed = true;
      for (let j = w.undos.length - 1; j >= 0; j--) w.undos[j]!();
    }
    for (const w of failed) w.onFailed?.(err);
  }

  private contextFor(partition: number, slot: ShardSlot<S>): ShardContext<R> {
    return {
      partition,
      now: () => this.clock(),
      scheduleTimer: (key: string, delayMs: number, op: TimerOperation<R>) => {
        const old = slot.timers.get(key);
        if (old) clearTimeout(old);
        const t = setTimeout(
          () => {
            slot.timers.delete(key);
            if (slot.state !== 'active') return;
            this.commit(slot, partition, op(this.clock())).catch((err) => this.opts.onError?.(`timer ${key} failed`, err));
          },
          Math.max(0, delayMs),
        );
        t.unref?.();
        slot.timers.set(key, t);
      },
      cancelTimer: (key: string) => {
        const t = slot.timers.get(key);
        if (t) clearTimeout(t);
        slot.timers.delete(key);
      },
      hasTimer: (key: string) => slot.timers.has(key),
    };
  }
}
