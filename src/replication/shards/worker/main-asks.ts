/**
 * A worker's questions to the main thread (cluster mode, docs/threads.md step 3): a worker has no
 * ZooKeeper session, so its leaders' ISR changes are written by the main thread with the broker's
 * (the answer is the new zkVersion, or BAD_VERSION: the same conditional write and outcome as a
 * ZkIsrWriter on the worker's own thread would give), and a test's inter-broker interceptor is a
 * function on the main thread, so the worker's fetchers ask it there before each request.
 */
import type { IsrChange, IsrWriter } from '../../partition/partition.js';
import type { InterBrokerInterceptor, InterBrokerRequest } from '../../../client/inter-broker-interceptor.js';
import type { FromShard, MainAnswer, MainAsk } from './shard-protocol.js';

/** What an ask carries, without its id (given here). */
type AskBody = MainAsk extends infer A ? (A extends MainAsk ? Omit<A, 'id'> : never) : never;

export class MainAsks {
  private nextId = 1;
  private readonly waiting = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();

  constructor(private readonly post: (m: FromShard) => void) {}

  private ask(body: AskBody): Promise<unknown> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.post({ ...body, id } as MainAsk);
    });
  }

  /** The main thread's answer to an ask. */
  told(m: MainAnswer): void {
    const w = this.waiting.get(m.id);
    this.waiting.delete(m.id);
    if (!w) return;
    if (m.error !== undefined) w.reject(new Error(m.error));
    else w.resolve(m.result);
  }

  /** The ISR writer of this shard's leaders: each change written by the main thread, which counts the accepted ones (no counts here: one total per broker). */
  isrWriter(): IsrWriter {
    return {
      writeIsr: (change: IsrChange, previousIsr?: readonly number[]) =>
        this.ask({ type: 'ask', what: 'writeIsr', change, ...(previousIsr ? { previousIsr: [...previousIsr] } : {}) }) as Promise<number | 'BAD_VERSION'>,
    };
  }

  /** The broker's interceptor, consulted on the main thread. */
  interceptor(): InterBrokerInterceptor {
    return { beforeSend: (request: InterBrokerRequest) => this.ask({ type: 'ask', what: 'beforeSend', request }).then(() => undefined) };
  }
}
