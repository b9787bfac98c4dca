import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MessageChannel } from 'node:worker_threads';
import { CoalescedPosts } from '../../../../src/replication/shards/worker/coalesced-posts.js';

type Msg = { id: number; payload?: unknown };

/** Batches as the other side receives them. */
function channel(): { posts: CoalescedPosts<Msg>; received: Msg[][]; unsent: [Msg, unknown][]; next: () => Promise<Msg[]>; close: () => void } {
  const { port1, port2 } = new MessageChannel();
  const received: Msg[][] = [];
  const unsent: [Msg, unknown][] = [];
  const waiting: ((b: Msg[]) => void)[] = [];
  port2.on('message', (b: Msg[]) => {
    received.push(b);
    waiting.shift()?.(b);
  });
  const posts = new CoalescedPosts<Msg>(
    (batch, transfer) => port1.postMessage(batch, transfer),
    (m, err) => unsent.push([m, err]),
  );
  return {
    posts,
    received,
    unsent,
    next: () => new Promise((resolve) => waiting.push(resolve)),
    close: () => {
      port1.close();
      port2.close();
    },
  };
}

test('messages posted in one turn, from microtasks too, cross as one message in order; the next turn is another', async () => {
  const c = channel();
  try {
    const first = c.next();
    c.posts.post({ id: 1 });
    await Promise.resolve();
    c.posts.post({ id: 2 });
    queueMicrotask(() => c.posts.post({ id: 3 }));
    assert.deepEqual(
      (await first).map((m) => m.id),
      [1, 2, 3],
    );
    const second = c.next();
    c.posts.post({ id: 4 });
    assert.deepEqual(
      (await second).map((m) => m.id),
      [4],
    );
    assert.equal(c.received.length, 2);
  } finally {
    c.close();
  }
});

test('transferred buffers move with the batch, each once; a message that cannot be cloned fails alone', async () => {
  const c = channel();
  try {
    const ab = new ArrayBuffer(1024);
    const arrived = c.next();
    c.posts.post({ id: 1, payload: ab }, [ab]);
    c.posts.post({ id: 2, payload: ab }, [ab]); // the same buffer twice in one batch
    c.posts.post({ id: 3, payload: () => 0 }); // a function cannot be cloned
    c.posts.post({ id: 4 });
    const batches = [await arrived];
    while (batches.flat().length < 3) batches.push(await c.next());
    assert.equal(ab.byteLength, 0, 'moved');
    assert.deepEqual(
      batches.flat().map((m) => m.id),
      [1, 2, 4],
    );
    assert.deepEqual(
      c.unsent.map(([m]) => m.id),
      [3],
    );
  } finally {
    c.close();
  }
});
