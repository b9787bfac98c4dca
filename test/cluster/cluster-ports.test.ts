/**
 * The cluster harness's first start survives a port taken between freePort() and the broker's
 * bind (CI saw EADDRINUSE there once: an outgoing connection can get a just-freed port as its
 * local port): the ports the harness chose are replaced and the broker started again. A broker
 * without zookeeper.connect (embedded) is enough to show it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ClusterBroker } from '../helpers/cluster.js';

test('a first start on a port taken meanwhile moves to a fresh port and starts', { timeout: 90_000 }, async () => {
  const taken = createServer();
  await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
  const port = (taken.address() as { port: number }).port;
  const root = await mkdtemp(join(tmpdir(), 'fjord-cluster-ports-'));
  const props = { 'broker.id': '0', listeners: `PLAINTEXT://127.0.0.1:${port}`, 'group.initial.rebalance.delay.ms': '0' };
  const b = new ClusterBroker(0, port, join(root, 'broker-0'), join(root, 'broker-0.log'), props, new Map(), true);
  try {
    await b.startFirst();
    assert.ok(b.running);
    assert.notEqual(b.port, port, 'a fresh port');
    assert.equal(props.listeners, `PLAINTEXT://127.0.0.1:${b.port}`);
    // A test's own listeners (not chosen by the harness) are never moved: the failure stands.
    const fixed = new ClusterBroker(1, port, join(root, 'broker-1'), join(root, 'broker-1.log'), {
      ...props,
      'broker.id': '1',
      listeners: `PLAINTEXT://127.0.0.1:${port}`,
    });
    await assert.rejects(fixed.startFirst(), /EADDRINUSE/);
  } finally {
    await b.kill().catch(() => undefined);
    taken.close();
    await rm(root, { recursive: true, force: true });
  }
});
