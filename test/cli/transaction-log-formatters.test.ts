/**
 * kafka-console-consumer's formatters for __transaction_state, on records the real transaction
 * coordinator wrote for a kafkajs transactional producer (one committed transaction, one
 * aborted): Kafka 3.9's JSON TransactionLogMessageFormatter (org.apache.kafka.tools.consumer),
 * the classic kafka.coordinator.transaction.TransactionLog$TransactionLogMessageFormatter, and
 * kafka-dump-log --transaction-log-decoder agreeing with the JSON one (one decoding).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import kafkajs from 'kafkajs';
import { startTestBroker } from '../helpers/broker.js';
import { runCli } from './helpers.js';

interface JsonLine {
  key: { version: number; data: { transactionalId: string } };
  value: { version: number; data: Record<string, unknown> } | null;
}

test('TransactionLogMessageFormatter (JSON and classic) prints what the coordinator wrote, as Kafka does', { timeout: 180000 }, async () => {
  const b = await startTestBroker({ 'transaction.state.log.num.partitions': '1' });
  try {
    const kafka = new kafkajs.Kafka({ clientId: 'tlf', brokers: [b.bootstrap], logLevel: kafkajs.logLevel.NOTHING, retry: { retries: 8 } });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'tlf', numPartitions: 2 }] });
    await admin.disconnect();
    const producer = kafka.producer({ transactionalId: 'tlf-tx', idempotent: true, maxInFlightRequests: 1, transactionTimeout: 45000 });
    await producer.connect();
    try {
      const t1 = await producer.transaction();
      await t1.send({
        topic: 'tlf',
        messages: [
          { value: '1', partition: 0 },
          { value: '2', partition: 1 },
        ],
      });
      await t1.commit();
      const t2 = await producer.transaction();
      await t2.send({ topic: 'tlf', messages: [{ value: '3', partition: 1 }] });
      await t2.abort();
    } finally {
      await producer.disconnect();
    }
    // The coordinator writes CompleteAbort after the markers: wait for it before reading.
    const deadline = Date.now() + 30000;
    for (;;) {
      const state = (await b.broker.services.txnCoordinator.describe('tlf-tx')).transactionState;
      if (state === 'CompleteAbort') break;
      assert.ok(Date.now() < deadline, `the transaction did not complete: ${state}`);
      await new Promise((r) => setTimeout(r, 50));
    }

    const read = (formatter: string) =>
      runCli('kafka-console-consumer', [
        '--bootstrap-server',
        b.bootstrap,
        '--topic',
        '__transaction_state',
        '--from-beginning',
        '--timeout-ms',
        '3000',
        '--consumer-property',
        'exclude.internal.topics=false',
        '--formatter',
        formatter,
      ]);

    // Both reads at once (each mostly waits out its --timeout-ms); the log is complete, nothing writes to it meanwhile.
    const classicNames = ['kafka.coordinator.transaction.TransactionLog$TransactionLogMessageFormatter'];
    const classicReads = classicNames.map(read);
    const json = await read('org.apache.kafka.tools.consumer.TransactionLogMessageFormatter');
    assert.equal(json.code, 0, json.stderr);
    const lines = json.stdout
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as JsonLine);
    assert.ok(lines.length >= 6, json.stdout);
    for (const l of lines) assert.deepEqual(l.key, { version: 0, data: { transactionalId: 'tlf-tx' } });
    const states = lines.map((l) => l.value!.data.transactionStatus);
    // Empty (InitProducerId), Ongoing, PrepareCommit, CompleteCommit, Ongoing, PrepareAbort, CompleteAbort.
    assert.deepEqual(
      states.filter((s, i) => i === 0 || s !== states[i - 1]),
      [0, 1, 2, 4, 1, 3, 5],
    );
    const ongoing = lines.find((l) => l.value!.data.transactionStatus === 2)!.value!;
    assert.equal(ongoing.version, 0);
    assert.deepEqual(
      Object.keys(ongoing.data),
      [
        'producerId',
        'producerEpoch',
        'transactionTimeoutMs',
        'transactionStatus',
        'transactionPartitions',
        'transactionLastUpdateTimestampMs',
        'transactionStartTimestampMs',
      ],
      "v0's fields in Kafka's order, no tagged v1 fields",
    );
    assert.deepEqual(ongoing.data.transactionPartitions, [{ topic: 'tlf', partitionIds: [0, 1] }]);
    assert.equal(ongoing.data.transactionTimeoutMs, 45000);

    for (const classicRead of classicReads) {
      const classic = await classicRead;
      assert.equal(classic.code, 0, classic.stderr);
      const out = classic.stdout.split('\n').filter((l) => l !== '');
      assert.equal(out.length, lines.length);
      const pid = String(ongoing.data.producerId);
      assert.match(
        out[0]!,
        new RegExp(
          `^tlf-tx::TransactionMetadata\\(transactionalId=tlf-tx, producerId=${pid}, producerEpoch=0, txnTimeoutMs=45000, state=Empty, pendingState=None, topicPartitions=HashSet\\(\\), txnStartTimestamp=-1, txnLastUpdateTimestamp=\\d+\\)$`,
        ),
      );
      const prepare = out.find((l) => l.includes('state=PrepareCommit'))!;
      assert.match(
        prepare,
        new RegExp(
          `^tlf-tx::TransactionMetadata\\(transactionalId=tlf-tx, producerId=${pid}, producerEpoch=0, txnTimeoutMs=45000, state=PrepareCommit, pendingState=None, topicPartitions=HashSet\\(tlf-0, tlf-1\\), txnStartTimestamp=\\d+, txnLastUpdateTimestamp=\\d+\\)$`,
        ),
      );
      assert.ok(out.some((l) => l.includes('state=CompleteAbort')));
    }

    // kafka-dump-log --transaction-log-decoder decodes the same data (DumpLogSegments' framing).
    const seg = path.join(b.dir, '__transaction_state-0', '00000000000000000000.log');
    const dump = spawnSync(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(new URL('../../src/cli/kafka-dump-log.ts', import.meta.url)), '--files', seg, '--transaction-log-decoder'],
      { encoding: 'utf8' },
    );
    assert.equal(dump.status, 0, dump.stderr);
    const payloads = dump.stdout
      .split('\n')
      .filter((l) => l.includes(' payload: '))
      .map((l) => JSON.parse(l.slice(l.indexOf(' payload: ') + 10)) as { version: string; data: Record<string, unknown> });
    assert.deepEqual(
      payloads.map((p) => p.data),
      lines.map((l) => l.value!.data),
    );
  } finally {
    await b.stop();
  }
});
