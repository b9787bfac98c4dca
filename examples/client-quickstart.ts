/**
 * Fjord client quick start (see docs/client.md): creates a topic, produces three records and
 * reads them back in a consumer group. Usage: npx tsx examples/client-quickstart.ts host:port
 */
import { Admin, Consumer, Producer } from '../src/client/index.js';

const bootstrapServers = process.argv[2] ?? 'localhost:9092';
const topic = `quickstart-${Date.now()}`;

const admin = new Admin({ bootstrapServers });
const created = await admin.createTopics([{ name: topic, numPartitions: 2, replicationFactor: 1 }]);
const err = created.get(topic);
if (err) throw err;

const producer = new Producer({ bootstrapServers, lingerMs: 5 });
for (const word of ['hello', 'fjord', 'world']) {
  const m = await producer.send({ topic, key: word, value: word.toUpperCase() });
  console.log(`sent ${word} to partition ${m.partition} at offset ${m.offset}`);
}
await producer.close();

const consumer = new Consumer({ bootstrapServers, groupId: 'quickstart', autoOffsetReset: 'earliest' });
consumer.subscribe([topic]);
let seen = 0;
for await (const r of consumer) {
  console.log(`received ${r.key} = ${r.value} (partition ${r.partition}, offset ${r.offset})`);
  if (++seen === 3) break;
}
await consumer.close();
await admin.deleteTopics([topic]);
await admin.close();
