/**
 * The work-around of test/helpers/platformatic-coordinator.ts on a real @platformatic/kafka
 * Consumer (no broker needed): a connection asked for a broker the metadata does not list fails
 * as a retriable network error without the stale-metadata mark (so the consumer looks its
 * coordinator up again), after clearing the metadata; and the client's own answer still carries
 * the mark that keeps the coordinator's node id (when it stops doing so, the work-around can go).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import '../helpers/promise-with-resolvers.js';
import { Consumer, NetworkError, stringDeserializers } from '@platformatic/kafka';
import { rediscoverCoordinatorOfUnlistedBroker } from '../helpers/platformatic-coordinator.js';

type Pool = { get(broker: unknown, callback: (error: Error | null) => void): void };

function consumerAndPool(): { consumer: Consumer<string, string, string, string>; pool: Pool } {
  const consumer = new Consumer({
    groupId: 'g',
    clientId: 'kip848-platformatic-coordinator',
    bootstrapBrokers: ['127.0.0.1:9'],
    deserializers: stringDeserializers,
    groupProtocol: 'consumer',
  });
  return { consumer, pool: consumer.connections as unknown as Pool };
}

const errorFor = (pool: Pool, broker: unknown) =>
  new Promise<Error & { code?: string; canRetry?: boolean; hasStaleMetadata?: boolean }>((resolve) => pool.get(broker, (error) => resolve(error!)));

test('@platformatic/kafka 2.12.1 marks a connection to an unlisted broker as stale metadata, which keeps the coordinator it found', async () => {
  const { consumer, pool } = consumerAndPool();
  try {
    const err = await errorFor(pool, undefined);
    assert.equal(err.code, 'PLT_KFK_NETWORK');
    assert.equal(err.hasStaleMetadata, true);
  } finally {
    await consumer.close();
  }
});

test('with the work-around, an unlisted broker is a plain retriable network error, and the metadata is cleared', async () => {
  const { consumer, pool } = consumerAndPool();
  let cleared = 0;
  const clearMetadata = consumer.clearMetadata.bind(consumer);
  consumer.clearMetadata = () => {
    cleared++;
    clearMetadata();
  };
  try {
    rediscoverCoordinatorOfUnlistedBroker(consumer);
    const err = await errorFor(pool, undefined);
    assert.ok(err instanceof NetworkError);
    assert.equal(err.canRetry, true);
    assert.notEqual(err.hasStaleMetadata, true);
    assert.equal(cleared, 1);
    // A listed broker still goes to the pool: nothing listens on port 9, so its error is the pool's own.
    const refused = await errorFor(pool, { host: '127.0.0.1', port: 9 });
    assert.match(refused.message, /connect|ECONNREFUSED/i);
    assert.equal(cleared, 1);
  } finally {
    await consumer.close();
  }
});
