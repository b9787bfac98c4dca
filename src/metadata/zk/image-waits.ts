/**
 * Bounded waits until the metadata image shows a write's result. A ZooKeeper-mode broker writes
 * topics to ZooKeeper as intents; the controller acts on them and tells every broker, so each
 * write then waits, up to the write timeout, for the image to hold what it asked for. The image
 * calls `recheck` after every change. Apart from the image (zk-broker-metadata.ts) because it
 * is about time and promises, not metadata.
 */
import { ErrorCode, KafkaError } from '../../protocol/errors.js';

interface Waiter {
  check: () => boolean;
  resolve: () => void;
  reject: (err: Error) => void;
}

export class ImageWaits {
  private waiters: Waiter[] = [];

  constructor(private readonly timeoutMs: number) {}

  /** Resolves when `check` holds (re-evaluated on every change), or throws REQUEST_TIMED_OUT. */
  waitFor(check: () => boolean, what: string): Promise<void> {
    if (check()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        reject(new KafkaError(ErrorCode.REQUEST_TIMED_OUT, `${what}: the controller did not confirm within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      const waiter: Waiter = {
        check,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      };
      this.waiters.push(waiter);
    });
  }

  /** The image changed: resolves the waits whose condition now holds. */
  recheck(): void {
    if (this.waiters.length > 0) {
      const done = this.waiters.filter((w) => w.check());
      this.waiters = this.waiters.filter((w) => !done.includes(w));
      for (const w of done) w.resolve();
    }
  }

  /** Fails every pending wait (shutdown). */
  rejectAll(error: () => Error): void {
    for (const w of this.waiters) w.reject(error());
    this.waiters = [];
  }
}
