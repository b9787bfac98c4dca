/**
 * Records the request frames a real client sends, for golden-bytes fixtures.
 *   npx tsx tools/capture-requests.ts <listenPort> <brokerHost:port> <outDir>
 * Sits between the client and a broker, forwards everything, and writes each client frame as
 * <outDir>/<n>-<apiKey>-v<version>.bin (size prefix removed).
 */
import net from 'node:net';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const [listenPort, target, outDir] = process.argv.slice(2);
if (!listenPort || !target || !outDir) {
  console.error('usage: capture-requests <listenPort> <host:port> <outDir>');
  process.exit(2);
}
mkdirSync(outDir, { recursive: true });
const [host, port] = target.split(':');
let n = 0;
net
  .createServer((client) => {
    const upstream = net.connect(Number(port), host);
    let pending = Buffer.alloc(0);
    client.on('data', (chunk) => {
      upstream.write(chunk);
      pending = Buffer.concat([pending, chunk]);
      while (pending.length >= 4 && pending.length >= 4 + pending.readInt32BE(0)) {
        const size = pending.readInt32BE(0);
        const frame = pending.subarray(4, 4 + size);
        const name = `${String(n++).padStart(3, '0')}-${frame.readInt16BE(0)}-v${frame.readInt16BE(2)}.bin`;
        writeFileSync(join(outDir, name), frame);
        pending = pending.subarray(4 + size);
      }
    });
    upstream.on('data', (c) => client.write(c));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  })
  .listen(Number(listenPort), '127.0.0.1');
