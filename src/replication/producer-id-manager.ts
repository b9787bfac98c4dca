/**
 * Hands out producer ids for InitProducerId. Like Kafka's latest_producer_id_block, ids are
 * reserved in blocks: the end of the current block is persisted (file `producer-id-block` in
 * the first log directory) before any id of it is given out, so a restart never reuses one.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { writeFileAtomically } from '../storage/checkpoint/atomic-file.js';

export const PRODUCER_ID_BLOCK_FILE = 'producer-id-block';
export const PRODUCER_ID_BLOCK_SIZE = 1000;

export class ProducerIdManager {
  private next = 0n;
  private blockEnd = 0n; // exclusive
  private pending: Promise<unknown> = Promise.resolve();

  private constructor(private readonly file: string) {}

  static async open(dir: string): Promise<ProducerIdManager> {
    const mgr = new ProducerIdManager(path.join(dir, PRODUCER_ID_BLOCK_FILE));
    try {
      const text = (await readFile(mgr.file, 'utf8')).trim();
      if (/^\d+$/.test(text)) mgr.next = mgr.blockEnd = BigInt(text);
    } catch {
      // No file yet: ids start at 0.
    }
    return mgr;
  }

  /** A fresh producer id, never handed out before by this broker's log directory. */
  generate(): Promise<bigint> {
    const run = async (): Promise<bigint> => {
      if (this.next >= this.blockEnd) {
        const end = this.next + BigInt(PRODUCER_ID_BLOCK_SIZE);
        await writeFileAtomically(this.file, `${end}\n`);
        this.blockEnd = end;
      }
      return this.next++;
    };
    const result = this.pending.then(run, run);
    this.pending = result.catch(() => undefined);
    return result;
  }
}
