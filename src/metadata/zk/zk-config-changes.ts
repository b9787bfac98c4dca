/**
 * Follows `/config/changes` as Kafka's ZkNodeChangeNotificationListener does, so every broker
 * re-reads an entity's configs when any broker or tool changes them: each sequential
 * `config_change_N` newer than the last one processed is read and handed to `onChange(type, name)`
 * in sequence order, and the children watch is re-armed on every pass. Watches die with the
 * session, so a new session triggers a full pass (notifications missed meanwhile are processed
 * then, by sequence number). After each pass, notifications older than `purgeAfterMs` (Kafka:
 * 15 min) are deleted, as every Kafka broker does, so /config/changes does not grow forever.
 * The following itself is zk-change-follower.ts's, shared with the ACL change paths.
 */
import type { Logger } from 'pino';
import type { ConfigEntityType, KafkaZkApi } from './zk-client-types.js';
import type { ZkSessionEvents } from './zk-session.js';
import { SequentialChangeFollower } from './zk-change-follower.js';

export interface ConfigChangeListenerOptions {
  zk: KafkaZkApi;
  /** The session under `zk`, for its `newSession` event (watches must be re-armed then). */
  session: {
    on(event: 'newSession', fn: (...args: ZkSessionEvents['newSession']) => void): unknown;
    off(event: 'newSession', fn: (...args: ZkSessionEvents['newSession']) => void): unknown;
  };
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
  private readonly follower: SequentialChangeFollower<{ entityType: ConfigEntityType; entityName: string }>;

  constructor(opts: ConfigChangeListenerOptions) {
    const { zk } = opts;
    this.follower = new SequentialChangeFollower({
      source: {
        list: (watch) => zk.getConfigChangeNames(watch),
        read: (name) => zk.getConfigChange(name),
        ...(zk.purgeConfigChanges ? { purge: (olderThanMs: number) => zk.purgeConfigChanges!(olderThanMs) } : {}),
      },
      session: opts.session,
      onChange: (change) => opts.onChange(change.entityType, change.entityName),
      what: '/config/changes',
      ...(opts.logger ? { logger: opts.logger } : {}),
      ...(opts.lastProcessed !== undefined ? { lastProcessed: opts.lastProcessed } : {}),
      ...(opts.purgeAfterMs !== undefined ? { purgeAfterMs: opts.purgeAfterMs } : {}),
      ...(opts.retryMs !== undefined ? { retryMs: opts.retryMs } : {}),
    });
  }

  /** Sequence number of the last notification handed to onChange. */
  get lastProcessed(): number {
    return this.follower.lastProcessed;
  }

  /** Processes existing notifications and arms the watch; resolves after that first pass. */
  start(): Promise<void> {
    return this.follower.start();
  }

  close(): void {
    this.follower.close();
  }
}
