/**
 * A consumer's offset commits, sent one at a time in the order they were made. A commit retries
 * while its group's coordinator moves (group/coordinator.ts), and several retrying at once would
 * land in whatever order each found the new coordinator: an older one landing after a newer one
 * moves the committed offsets back. Java's consumer keeps the same order (a commitSync completes
 * after the async commits made before it; an auto-commit is not sent while another is in flight).
 */
export class CommitQueue {
  private tail: Promise<unknown> = Promise.resolve();
  private queued = 0;

  /** Whether a commit is waiting or in flight (an auto-commit tick then sends nothing). */
  get busy(): boolean {
    return this.queued > 0;
  }

  /** Runs `commit` once every commit queued before it has settled, whatever their outcome. */
  run<T>(commit: () => Promise<T>): Promise<T> {
    this.queued++;
    const result = this.tail.then(commit).finally(() => {
      this.queued--;
    });
    this.tail = result.catch(() => undefined);
    return result;
  }
}
