/**
 * Reads every partition of a topic from the beginning to its end (partition EOF) with
 * confluent-kafka (librdkafka) at a chosen isolation level, as the transaction tests check what
 * read_committed and read_uncommitted consumers see. Values come back in arrival order.
 */
import assert from 'node:assert/strict';
import { PYTHON } from '../helpers/peers.js';
import { run } from '../helpers/run.js';

const CONSUME = `
import sys, json
from confluent_kafka import Consumer, TopicPartition, OFFSET_BEGINNING
bootstrap, topic, isolation, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
c = Consumer({'bootstrap.servers': bootstrap, 'group.id': 'read-' + isolation, 'enable.auto.commit': False,
              'enable.partition.eof': True, 'isolation.level': isolation})
c.assign([TopicPartition(topic, i, OFFSET_BEGINNING) for i in range(n)])
out, errors, eof = [], [], set()
while len(eof) < n:
    m = c.poll(15)
    if m is None: errors.append('timed out'); break
    if m.error():
        if m.error().code() == -191: eof.add(m.partition()); continue
        errors.append(str(m.error())); break
    out.append(m.value().decode())
c.close()
print(json.dumps({'values': out, 'errors': errors}))
`;

export async function consumeAll(bootstrap: string, topic: string, isolation: 'read_committed' | 'read_uncommitted', partitions: number): Promise<string[]> {
  const res = await run(PYTHON, ['-c', CONSUME, bootstrap, topic, isolation, String(partitions)], { timeoutMs: 90_000 });
  assert.equal(res.code, 0, res.stderr);
  const out = JSON.parse(res.stdout) as { values: string[]; errors: string[] };
  assert.deepEqual(out.errors, []);
  return out.values;
}
