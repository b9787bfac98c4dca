/**
 * A well-behaved client in its own process (so the attacker's work does not count against it):
 *   node --import tsx tools/fuzz/latency-probe.ts <port> <topic>
 * asks Metadata v12 of `topic` back to back on one connection, 5 ms apart. Each line read on
 * stdin is answered on stdout with the worst and the count of the waits since the previous line:
 *   {"worstMs":n,"requests":n}
 * A request in flight counts with the time it has waited so far.
 */
import net from 'node:net';
import { createInterface } from 'node:readline';
import type { MessageCodec } from '../../src/protocol/primitives/index.js';
import { API_SPECS, type MetadataRequest } from '../../src/protocol/messages/index.js';
import { FrameSplitter, encodeRequest } from './wire.js';

const [portArg, topic] = process.argv.slice(2);
const frame = encodeRequest(
  3,
  API_SPECS[3]!.request as MessageCodec<MetadataRequest>,
  12,
  { topics: [{ name: topic! }], allowAutoTopicCreation: false },
  1,
  'latency-probe',
);

let worstMs = 0;
let requests = 0;
let sentAt = 0;
const socket = net.connect(Number(portArg), '127.0.0.1');
socket.setNoDelay(true);
const splitter = new FrameSplitter();
const send = (): void => {
  sentAt = performance.now();
  socket.write(frame);
};
socket.on('connect', send);
socket.on('data', (chunk: Buffer) => {
  if (splitter.feed(chunk).length === 0) return;
  worstMs = Math.max(worstMs, performance.now() - sentAt);
  requests++;
  sentAt = 0;
  setTimeout(send, 5);
});
// The broker went away (an attack took it down): the request in flight never ends, and that
// shows in the figures as a wait that keeps growing.
socket.on('error', () => undefined);
createInterface({ input: process.stdin }).on('line', () => {
  const waiting = sentAt > 0 ? performance.now() - sentAt : 0;
  process.stdout.write(`${JSON.stringify({ worstMs: Math.round(Math.max(worstMs, waiting)), requests })}\n`);
  worstMs = 0;
  requests = 0;
});
process.stdin.on('end', () => process.exit(0));
