/**
 * RemoteSocket (num.network.threads > 1): the main thread's stand-in for a socket a network
 * thread owns. Backpressure follows the thread's confirmations, frames that come while paused
 * wait for resume, and close is said once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RemoteSocket } from '../../../src/server/network/threads/remote-socket.js';
import type { ToThread } from '../../../src/server/network/threads/protocol.js';

function socket(): { remote: RemoteSocket; sent: ToThread[] } {
  const sent: ToThread[] = [];
  return { remote: new RemoteSocket(7, (m) => sent.push(m)), sent };
}

test('writes are posted as copies; past 64 KiB write() says wait, and the thread confirming them brings drain', () => {
  const { remote, sent } = socket();
  const small = Buffer.from('abc');
  assert.equal(remote.write(small), true);
  small.fill(0); // the caller may reuse its memory at once
  const first = sent[0] as Extract<ToThread, { t: 'write' }>;
  assert.equal(Buffer.from(first.bytes).toString(), 'abc');
  assert.equal(first.ack, false);

  assert.equal(remote.write(Buffer.alloc(70_000)), false);
  const big = sent[1] as Extract<ToThread, { t: 'write' }>;
  assert.equal(big.ack, true, 'the write that crossed the mark asks for a confirmation');
  assert.equal(big.upTo, 70_003);
  assert.equal(remote.writableLength, 70_003);

  let drained = 0;
  remote.on('drain', () => drained++);
  remote.onWritten(70_003);
  assert.equal(remote.writableLength, 0);
  assert.equal(drained, 1);
});

test('a confirmation that leaves more than the mark in flight asks for the next one instead of draining', () => {
  const { remote, sent } = socket();
  remote.write(Buffer.alloc(70_000)); // asks
  remote.write(Buffer.alloc(70_000)); // one confirmation is pending: does not ask again
  assert.deepEqual(
    sent.map((m) => (m.t === 'write' ? m.ack : m.t)),
    [true, false],
  );
  let drained = 0;
  remote.on('drain', () => drained++);
  remote.onWritten(70_000);
  assert.equal(drained, 0);
  assert.deepEqual(sent[2], { t: 'ack', id: 7, upTo: 140_000 });
  remote.onWritten(140_000);
  assert.equal(drained, 1);
});

test('corked writes go as one message; frames that come while paused wait for resume (a later tick, as a socket), the end after them', async () => {
  const { remote, sent } = socket();
  remote.cork();
  remote.write(Buffer.from('ab'));
  remote.write(Buffer.from('cd'));
  assert.equal(sent.length, 0);
  remote.uncork();
  assert.equal(sent.length, 1);
  assert.equal(Buffer.from((sent[0] as Extract<ToThread, { t: 'write' }>).bytes).toString(), 'abcd');

  const seen: string[] = [];
  remote.on('data', (b: Buffer) => seen.push(b.toString()));
  remote.on('end', () => seen.push('end'));
  remote.pause();
  remote.onFrames(Buffer.from('f1'));
  remote.onEnd();
  assert.deepEqual(seen, []);
  remote.resume();
  assert.deepEqual(seen, [], 'not from inside resume(): the connection calls it from its pump');
  await new Promise((resolve) => process.nextTick(resolve));
  assert.deepEqual(seen, ['f1', 'end']);
  assert.deepEqual(
    sent.slice(1).map((m) => m.t),
    ['pause', 'resume'],
  );
});

test('destroy tells the thread once and says close once, also when the thread reports the close after', async () => {
  const { remote, sent } = socket();
  let closes = 0;
  remote.on('close', () => closes++);
  remote.destroy();
  remote.destroy();
  await new Promise((resolve) => process.nextTick(resolve));
  remote.onClosed();
  assert.equal(closes, 1);
  assert.deepEqual(sent, [{ t: 'destroy', id: 7 }]);
  assert.equal(remote.write(Buffer.from('x')), false, 'nothing is posted after destroy');
  assert.equal(sent.length, 1);
});
