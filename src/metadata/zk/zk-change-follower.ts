/**
 * Follows one ZooKeeper notification directory of sequential znodes (`<prefix><seq>`) as Kafka's
 * ZkNodeChangeNotificationListener does, so every broker re-reads what any broker or tool
 * changed: each notification newer than the last one processed is read and handed to
 * `onChange` in sequence order, and the children watch is re-armed on every pass. Watches die
 * with the session, so a new session triggers a full pass (notifications missed meanwhile are
 * processed then, by sequence number). After each pass, notifications older than `purgeAfterMs`
 * (Kafka: 15 min) are deleted, as every Kafka broker does, so the directory does not grow forever.
 *
 * The directory is reached through a `ChangeSource`: /config/changes (zk-config-changes.ts,
 * through KafkaZkApi) and the ACL change paths (zk-acls.ts, `znodeChangeSource`) use it.
 */
import type { Logger } from 'pino';
import { sequenceNumber } from './zk-paths.js';
import { isZkError, type ZkSession, type ZkSessionEvents, type ZkWatcher } from './zk-session.js';
import { messageOf } from '../../common/errors.js';

/** Thrown (or an Error whose message starts with "malformed ") by `read` for a notification to skip. */
export const MALFORMED = /^malformed /;

export interface ChangeSource<T> {
  /** The notification names, arming `watch` for the next change. */
  list(watch: ZkWatcher): Promise<string[]>;
  /** One notification's content; undefined when it is gone (purged meanwhile). */
  read(name: string): Promise<T | undefined>;
  /** Deletes notifications older than this. */
  purge?(olderThanMs: number): Promise<unknown>;
}

export interface SequentialChangeFollowerOptions<T> {
  source: ChangeSource<T>;
  /** The session under the source, for its `newSession` event (watches must be re-armed then). */
  session: {
    on(event: 'newSession', fn: (...args: ZkSessionEvents['newSession']) => void): unknown;
    off(event: 'newSession', fn: (...args: ZkSessionEvents['newSession']) => void): unknown;
  };
  /** Called once per notification, in order; a failure is logged and the notification skipped (as Kafka). */
  onChange: (change: T) => void | Promise<void>;
  /** For log lines: the directory followed, e.g. /config/changes. */
  what: string;
  logger?: Logger;
  /** The sequence number already processed; -1 (the default, as Kafka) processes every existing notification on start. */
  lastProcessed?: number;
  /** Age after which notifications are deleted; default 15 min (Kafka's). */
  purgeAfterMs?: number;
  /** Back-off before retrying a pass that failed on ZooKeeper (the watch may not be armed). */
  retryMs?: number;
}

export class SequentialChangeFollower<T> {
  private last: number;
  private running: Promise<void> | undefined;
  private again = false;
  private closed = false;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: SequentialChangeFollowerOptions<T>) {
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
    this.opts.logger?.info(`new ZooKeeper session: re-reading ${this.opts.what}`);
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
    const { source, logger, onChange, what } = this.opts;
    let names: string[];
    try {
      names = (await source.list(this.onWatch)).sort((a, b) => sequenceNumber(a) - sequenceNumber(b));
    } catch (err) {
      this.scheduleRetry(err);
      return;
    }
    for (const name of names) {
      if (this.closed) return;
      const seq = sequenceNumber(name);
      if (seq <= this.last) continue;
      let change: T | undefined;
      try {
        change = await source.read(name);
      } catch (err) {
        if (err instanceof Error && MALFORMED.test(err.message)) {
          logger?.error({ err: err.message, notification: name }, `skipping an unreadable ${what} notification`);
          this.last = seq;
          continue;
        }
        this.scheduleRetry(err); // ZooKeeper trouble: try this one again later
        return;
      }
      this.last = seq;
      if (change === undefined) continue; // purged meanwhile
      try {
        await onChange(change);
      } catch (err) {
        logger?.error({ err: messageOf(err), notification: name }, `${what} change handler failed`);
      }
    }
    if (names.length === 0 || !source.purge) return;
    try {
      await source.purge(this.opts.purgeAfterMs ?? 15 * 60_000);
    } catch (err) {
      logger?.warn({ err: messageOf(err) }, `could not purge old ${what} notifications`);
    }
  }

  private scheduleRetry(err: unknown): void {
    if (this.closed) return;
    this.opts.logger?.warn({ err: messageOf(err) }, `could not read ${this.opts.what}; retrying`);
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.trigger(), this.opts.retryMs ?? 1000);
    this.retryTimer.unref();
  }
}

type ZnodeSession = Pick<ZkSession, 'children' | 'getIfExists' | 'delete'>;

/** A notification directory read straight from znodes: each notification's data as a string. */
export function znodeChangeSource(session: ZnodeSession, root: string, prefix: string): ChangeSource<string> {
  return {
    list: async (watch) => (await session.children(root, watch)).filter((n) => n.startsWith(prefix)),
    read: async (name) => (await session.getIfExists(`${root}/${name}`))?.data.toString('utf8'),
    async purge(olderThanMs) {
      const now = Date.now();
      for (const name of (await session.children(root)).filter((n) => n.startsWith(prefix))) {
        const node = await session.getIfExists(`${root}/${name}`);
        if (!node || now - node.stat.ctimeMs <= olderThanMs) continue;
        await session.delete(`${root}/${name}`, node.stat.version).catch((err: unknown) => {
          if (!isZkError(err, 'NO_NODE')) throw err;
        });
      }
    },
  };
}
