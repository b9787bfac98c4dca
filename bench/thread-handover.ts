/**
 * What handing work between threads costs on this machine (issue 26: the hand-over figures the
 * multi-core design in docs/threads.md is predicted from). Runs in well under a minute.
 *
 *   node --import tsx bench/thread-handover.ts [--quick]
 *
 * - postMessage round trip (main -> worker -> main, one at a time): an empty message; 1 KiB,
 *   64 KiB and 1 MiB copied (structured clone); the same sizes transferred (the ArrayBuffer moves
 *   both ways, nothing is copied). Also a MessageChannel port handed to the worker, and one within
 *   a single thread (the clone cost without the thread hop).
 * - postMessage one way, pipelined (what a network thread streaming requests to a shard pays):
 *   messages/s, MB/s, and each side's CPU per message (/proc/thread-self/schedstat, ns).
 * - A SharedArrayBuffer ring (single producer, single consumer, length-prefixed records) with
 *   Atomics.notify and Atomics.waitAsync, so neither side blocks its event loop: round-trip
 *   latency and one-way throughput (the producer copies into the ring, the consumer reads in place).
 * - writeSync / readSync of a file (64 KiB and 1 MiB calls, page cache) from the main thread and
 *   from a worker: whether a shard worker's log I/O costs what the main thread's does.
 * - Buffer slices: what postMessage does with a pooled Buffer.allocUnsafe slice and with a frame
 *   that is a subarray of a socket chunk, copied and in the transfer list (bytes that arrive,
 *   whether the sender's other views survive); and the socket chunks Node hands over on loopback.
 * - The produce path in miniature: batches in a SharedArrayBuffer slab handed to 0 (inline), 1
 *   and 2 shard workers that CRC32C and write them: the main thread's CPU per MB left after the
 *   hand-over, and the shards' CPU per MB for the work moved.
 * - Whether threads can share one listening socket (listen({ fd }): Node 20 has no reusePort and
 *   cannot send a socket to a worker), and whether writeSync/readSync/socket.write take
 *   SharedArrayBuffer views (a shard appending straight from shared memory).
 * The load average is printed with the figures: on a loaded machine the thread hop waits for a
 * core, so latencies grow with the load; CPU per message is the figure that tolerates load.
 */
import { cpus } from 'node:os';
import { bufferSlices } from './thread-handover/buffer-slices.js';
import { load, rows } from './thread-handover/common.js';
import { fileIo } from './thread-handover/file-io.js';
import { postMessageRoundTrips, postMessageThroughput } from './thread-handover/post-message.js';
import { shardPipeline } from './thread-handover/shard-pipeline.js';
import { sharedListenFd } from './thread-handover/shared-listen-fd.js';
import { sharedRing } from './thread-handover/shared-ring.js';

async function main(): Promise<void> {
  const started = Date.now();
  console.error(`node ${process.version}, ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), load average ${load()}`);
  await postMessageRoundTrips();
  await postMessageThroughput();
  await sharedRing();
  await shardPipeline();
  await fileIo();
  await bufferSlices();
  await sharedListenFd();
  const header = `node ${process.version}; ${cpus().length} cores (${cpus()[0]?.model ?? '?'}); ${((Date.now() - started) / 1000).toFixed(0)} s; load average at the end ${load()}`;
  const table = (kind: string, head: string[]): string => {
    const body = rows.filter((r) => r[0] === kind).map((r) => `| ${r.slice(1).join(' | ')} |`);
    return `| ${head.join(' | ')} |\n|${head.map(() => '---').join('|')}|\n${body.join('\n')}`;
  };
  console.log(
    [
      header,
      table('round trip', ['postMessage round trip (median)', 'main ↔ worker', 'MessageChannel port ↔ worker', 'MessageChannel, same thread', 'load average']),
      table('one way', [
        'postMessage one way, pipelined',
        'messages/s',
        'MB/s (transferred: moved by reference, never touched)',
        'sender CPU / msg',
        'receiver CPU / msg',
        'load average',
      ]),
      [
        table('ring round trip', ['SAB ring round trip (Atomics.waitAsync both sides)', 'median', 'p99', 'load average']),
        table('ring one way', [
          'SAB ring one way (copy in, read in place)',
          'messages/s',
          'MB/s',
          'producer CPU / msg',
          'consumer CPU / msg',
          'producer waits (ring full)',
          'load average',
        ]),
      ].join('\n\n'),
      table('shards', [
        'CRC32C + write of batches in a shared slab',
        'where',
        'MB/s',
        'main thread CPU / MB',
        'shard workers CPU / MB (all)',
        'main thread CPU / batch (the hand-over)',
        'load average',
      ]),
      [
        table('writeSync', ['file I/O (page cache)', 'main thread', 'main CPU', 'worker', 'worker CPU', 'load average']),
        rows
          .filter((r) => r[0] === 'readSync')
          .map((r) => `| ${r.slice(1).join(' | ')} |`)
          .join('\n'),
      ].join('\n'),
      [...rows.filter((r) => r[0] === 'slice' || r[0] === 'socket chunks' || r[0] === 'listen fd').map((r) => `- ${r.slice(1).join('; ')}`)].join('\n'),
    ].join('\n\n'),
  );
}

await main();
