/**
 * Follows `/config/changes` as Kafka's ZkNodeChangeNotificationListener does, so every broker
 * re-reads an entity's configs when any broker or tool changes them: each sequential
 * `config_change_N` newer than the last one processed is read and handed to `onChange(type, name)`
 * in sequence order, and the children watch is re-armed on every pass. Watches die with the
 * session, so a new session triggers a full pass (notifications missed meanwhile are processed
 * then, by sequence number). After each pass, notifications older than `purgeAfterMs` (Kafka:
 * 15 min) are deleted, as every Kafka broker does, so /config/changes does not grow forever.
 */
import type { Logger } from 'pino';
import type { ConfigEntityType, KafkaZkApi } from './zk-client-types.js';
import { sequenceNumber } from './zk-data.js';
import type { ZkSessionEvents } from './zk-session.js';

export interface ConfigChangeListenerOptions {
  zk: KafkaZkApi;
  /** The session under `zk`, for its `newSession` event (watches must be re-armed then). */
  session: { on(event: 'newSession', fn: (...args: ZkSessionEvents['newSession']) => void): unknown; off(event: 'newSession', fn: (...args: ZkSessionEvents['newSession']) => void): unknown };
  /** Called once per notification, in order; a failure is logged and the notification skipped (as Kafka). */
  onChange: (entityType: ConfigEntityType, entityName: string) => void | Promise<void>;
  logger?: Logger;
  /** The sequence number already processed; -1 (the default, as Kafka) processes every existing notification on start. */
  lastProcessed?: number;
  /** Age after which notifications are deleted; default 15 min (Kafka's). A broker that was away longer re-reads all configs on start anyway. */
  purgeAfterMs?: number;
  /** Back-off before retrying a pass that failed on ZooKeeper (the watch may not be armed). */
  retryMs?: number;
}

export class ConfigChangeListener {
  private last: number;
  private running: Promise<void> | undefined;
  private again = false;
  private closed = false;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: ConfigChangeListenerOptions) {
    this.last = opts.lastProcessed ?? -1;
  }

  /** Sequence number of the last notification handed to onChange. */
  get lastProcessed(): number {
    return this.last;
  }

  /** Processes existing notifications and arms the watch; resolves after that first pass. */
  async start(): Promise<void> {
    this.opts.session.on('newSession', this.onNewSession);
    await this.trigger();
  }

  close(): void {
    this.closed = true;
    this.opts.session.off('newSession', this.onNewSession);
    clearTimeout(this.retryTimer);
  }

  private readonly onNewSession = (): void => {
    this.opts.logger?.info('new ZooKeeper session: re-reading /config/changes');
    void this.trigger();
  };

  private readonly onWatch = (): void => void this.trigger();

  /** One pass at a time; a trigger during a pass runs one more pass after it. */
  private trigger(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        await this.pass();
      } while (this.again && !this.closed);
      this.running = undefined;
    })();
    return this.running;
  }

  private async pass(): Promise<void> {
    const { zk, logger, onChange } = this.opts;
    let names: string[];
    try {
      names = await zk.getConfigChangeNames(this.onWatch);
    } catch (err) {
      this.scheduleRetry(err);
      return;
    }
    for (const name of names) {
      if (this.closed) return;
      const seq = sequenceNumber(name);
      if (seq <= this.last) continue;
      let change: Awaited<ReturnType<KafkaZkApi['getConfigChange']>>;
      try {
        change = await zk.getConfigChange(name);
      } catch (err) {
        if (err instanceof Error && /^malformed /.test(err.message)) {
          logger?.error({ err: err.message, notification: name }, 'skipping an unreadable config change notification');
          this.last = seq;
          continue;
        }
        this.scheduleRetry(err); // ZooKeeper trouble: try this one again later
        return;
      }
      this.last = seq;
      if (!change) continue; // purged meanwhile
      try {
        await onChange(change.entityType, change.entityName);
      } catch (err) {
        logger?.error({ err: err instanceof Error ? err.message : String(err), notification: name }, 'config change handler failed');
      }
    }
    if (names.length === 0 || !zk.purgeConfigChanges) return;
    try {
      await zk.purgeConfigChanges(this.opts.purgeAfterMs ?? 15 * 60_000);
    } catch (err) {
      logger?.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not purge old /config/changes notifications');
    }
  }

  private scheduleRetry(err: unknown): void {
    if (this.closed) return;
    this.opts.logger?.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not read /config/changes; retrying');
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.trigger(), this.opts.retryMs ?? 1000);
    this.retryTimer.unref();
  }
}
