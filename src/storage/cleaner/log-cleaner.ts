import type { Log } from '../log.js';
import type { StorageLogger } from '../logger.js';

export class LogCleaner {
  constructor(
    private readonly logs: () => Log[],
    private readonly logger: StorageLogger,
    private readonly clock: () => number,
  ) {}
  async cleanOnce(): Promise<number> {
    return 0;
  }
  async abort(_log: Log): Promise<void> {}
  async shutdown(): Promise<void> {}
}
