/**
 * The main thread's side of a worker's asks (main-asks.ts; cluster mode, docs/threads.md step 3):
 * an ISR change is written with the broker's ZooKeeper writer, the same conditional write on the
 * partition epoch, the same isr_change_notification, and counted in the broker's one total of
 * shrinks and expands; the answer is the new zkVersion or BAD_VERSION. A test's interceptor is
 * consulted here, its verdict (go, or fail as a broken connection) sent back.
 */
import type { IsrChange, IsrWriter } from '../../partition/partition.js';
import type { InterBrokerInterceptor } from '../../../client/inter-broker-interceptor.js';
import { messageOf } from '../../../common/errors.js';
import type { MainAnswer, MainAsk } from './shard-protocol.js';

export interface MainSide {
  /** The broker's ISR writer (ZooKeeper); absent in embedded mode, where no ask comes. */
  isrWriter?: IsrWriter;
  interceptor?: InterBrokerInterceptor;
  /** An ISR change a worker's leader had accepted (the role ledger keeps the newest partition state for a restart). */
  isrWritten?: (change: IsrChange, zkVersion: number) => void;
}

/** Answers one ask; never rejects (a failure is the answer's `error`). */
export async function answerAsk(m: MainAsk, main: MainSide): Promise<MainAnswer> {
  try {
    if (m.what === 'beforeSend') {
      await main.interceptor?.beforeSend(m.request);
      return { type: 'told', id: m.id };
    }
    const writer = main.isrWriter;
    if (!writer) throw new Error('this broker writes no ISR changes (embedded mode)');
    const result = await writer.writeIsr(m.change, m.previousIsr);
    if (typeof result === 'number') {
      const before = m.previousIsr?.length ?? m.change.isr.length;
      if (writer.counts && m.change.isr.length < before) writer.counts.shrinks++;
      else if (writer.counts && m.change.isr.length > before) writer.counts.expands++;
      main.isrWritten?.(m.change, result);
    }
    return { type: 'told', id: m.id, result };
  } catch (err) {
    return { type: 'told', id: m.id, error: messageOf(err) };
  }
}
