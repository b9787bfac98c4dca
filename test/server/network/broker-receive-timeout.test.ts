// socket.request.receive.timeout.ms on a real broker: a trickled frame is closed at the deadline,
// the log says why, and another client is served meanwhile.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { once } from 'node:events';
import { startTestBroker } from '../../helpers/broker.js';
import { RawClient } from '../../helpers/raw-client.js';
import { ApiVersionsRequestCodec, ApiVersionsResponseCodec } from '../../../src/protocol/messages/index.js';

test('a broker closes a frame trickled past socket.request.receive.timeout.ms and keeps serving others', async () => {
  const b = await startTestBroker({ 'socket.request.receive.timeout.ms': '500' });
  const trickler = net.connect(b.port, '127.0.0.1');
  await once(trickler, 'connect');
  trickler.on('error', () => undefined);
  let closed = false;
  trickler.on('close', () => (closed = true));
  trickler.resume();
  const frame = Buffer.alloc(4 + 100);
  frame.writeInt32BE(100, 0);
  frame.writeInt16BE(18, 4); // ApiVersions v0
  const startedAt = Date.now();
  let sent = 0;
  const trickle = setInterval(() => {
    if (!closed && sent < frame.length) trickler.write(frame.subarray(sent, ++sent));
  }, 25);
  const good = await RawClient.connect(b.port);
  try {
    const deadline = Date.now() + 15_000;
    let answers = 0;
    while (!closed && Date.now() < deadline) {
      const r = await good.request(18, ApiVersionsRequestCodec, ApiVersionsResponseCodec, 3, { clientSoftwareName: 'good', clientSoftwareVersion: '1' });
      assert.equal(r.errorCode, 0);
      answers++;
      await new Promise((resolve) => setImmediate(resolve));
    }
    assert.ok(closed, 'the trickling connection was not closed');
    assert.ok(Date.now() - startedAt >= 450, `closed after ${Date.now() - startedAt} ms`);
    assert.ok(sent < frame.length);
    assert.ok(answers > 0);
  } finally {
    clearInterval(trickle);
    trickler.destroy();
    good.close();
    await b.stop();
  }
});
