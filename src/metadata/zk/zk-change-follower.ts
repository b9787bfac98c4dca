/**
 * Follows one ZooKeeper notification directory of sequential znodes (`<root>/<prefix><seq>`) as
 * Kafka's ZkNodeChangeNotificationListener does: each notification newer than the last processed
 * is read and handed to `onChange(data)` in sequence order; the children watch is re-armed on
 * every pass; a new session triggers a full pass (watches die with the session); notifications
 * older than `purgeAfterMs` (Kafka: 15 min) are deleted after a pass. The generic form of
 * zk-config-changes.ts (which reads its notifications through KafkaZkApi); the ACL change paths
 * use this one.
 */
import type { Logger } from 'pino';
import { isZkError, type ZkSession } from './zk-session.js';
import { sequenceNumber } from './zk-data.js';

type Session = Pick<ZkSession, 'children' | 'getIfExists' | 'delete' | 'on' | 'off'>;

export interface SequentialChangeFollowerOptions {
  session: Session;
  root: string;
  prefix: string;
  onChange: (data: string) => void | Promise<void>;
  /** Process only notifications created after start (default false: every existing one, as Kafka). */
  skipExisting?: boolean;
  logger?: Logger;
  purgeAfterMs?: number;
  retryMs?: number;
}

export class SequentialChangeFollower {
  private last = -1;
  private running: Promise<void> | undefined;
  private again = false;
  private closed = false;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: SequentialChangeFollowerOptions) {}

  async start(): Promise<void> {
    if (this.opts.skipExisting) {
      const names = await this.opts.session.children(this.opts.root).catch(() => [] as string[]);
      for (const n of names) if (n.startsWith(this.opts.prefix)) this.last = Math.max(this.last, sequenceNumber(n));
    }
    this.opts.session.on('newSession', this.onNewSession);
    await this.trigger();
  }

  close(): void {
    this.closed = true;
    this.opts.session.off('newSession', this.onNewSession);
    clearTimeout(this.retryTimer);
  }

  private readonly onNewSession = (): void => void this.trigger();
  private readonly onWatch = (): void => void this.trigger();

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
    const { session, root, prefix, logger, onChange } = this.opts;
    let names: string[];
    try {
      names = (await session.children(root, this.onWatch)).filter((n) => n.startsWith(prefix)).sort((a, b) => sequenceNumber(a) - sequenceNumber(b));
    } catch (err) {
      this.scheduleRetry(err);
      return;
    }
    const now = Date.now();
    const purgeAfter = this.opts.purgeAfterMs ?? 15 * 60_000;
    for (const name of names) {
      if (this.closed) return;
      const seq = sequenceNumber(name);
      const path = `${root}/${name}`;
      let node: Awaited<ReturnType<Session['getIfExists']>>;
      try {
        node = await session.getIfExists(path);
      } catch (err) {
        this.scheduleRetry(err);
        return;
      }
      if (seq > this.last) {
        this.last = seq;
        if (node) {
          try {
            await onChange(node.data.toString('utf8'));
          } catch (err) {
            logger?.error({ err: err instanceof Error ? err.message : String(err), notification: path }, 'change notification handler failed');
          }
        }
      }
      if (node && now - node.stat.ctimeMs > purgeAfter) {
        await session.delete(path, node.stat.version).catch((err: unknown) => {
          if (!isZkError(err, 'NO_NODE')) logger?.warn({ notification: path, err: String(err) }, 'could not purge an old notification');
        });
      }
    }
  }

  private scheduleRetry(err: unknown): void {
    if (this.closed) return;
    this.opts.logger?.warn({ root: this.opts.root, err: err instanceof Error ? err.message : String(err) }, 'could not read change notifications; retrying');
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.trigger(), this.opts.retryMs ?? 1000);
    this.retryTimer.unref();
  }
}
