/**
 * confluent-kafka (librdkafka) clients for the quota tests and bench/quotas.ts: a greedy producer
 * and a consumer that report what was delivered per 100 ms (wall clock) and the throttle times
 * librdkafka reported (throttle_cb, from throttle_time_ms in the broker's responses).
 */
import { PYTHON } from '../helpers/peers.js';
import { run } from '../helpers/run.js';

const GREEDY_PRODUCER = `
import sys, json, time
from confluent_kafka import Producer
bootstrap, topic, client_id, seconds, value_bytes = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), int(sys.argv[5])
extra = json.loads(sys.argv[6]) if len(sys.argv) > 6 else {}
buckets = {}
throttles = []
errors = []
def on_throttle(ev):
    throttles.append([time.time(), ev.throttle_time])
p = Producer({'bootstrap.servers': bootstrap, 'client.id': client_id, 'linger.ms': 5, 'acks': 1,
              'queue.buffering.max.kbytes': 8192, 'batch.size': 262144, 'throttle_cb': on_throttle, **extra})
value = b'x' * value_bytes
def cb(err, msg):
    if err is not None:
        if len(errors) < 5: errors.append(str(err))
        return
    b = int(time.time() * 10)
    buckets[b] = buckets.get(b, 0) + len(msg.value())
start = time.time()
print(json.dumps({'started': start}), flush=True)
while time.time() - start < seconds:
    try:
        p.produce(topic, value=value, partition=0, on_delivery=cb)
    except BufferError:
        p.poll(0.01)
        continue
    p.poll(0)
end = time.time()
p.poll(0)
p.purge()
p.flush(5)
print(json.dumps({'start': start, 'end': end, 'buckets': sorted(buckets.items()), 'throttles': throttles, 'errors': [e for e in errors if 'Purged' not in e]}))
`;

const CONSUMER = `
import sys, json, time
from confluent_kafka import Consumer, TopicPartition, OFFSET_BEGINNING
bootstrap, topic, client_id, seconds = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
buckets = {}
throttles = []
def on_throttle(ev):
    throttles.append([time.time(), ev.throttle_time])
c = Consumer({'bootstrap.servers': bootstrap, 'client.id': client_id, 'group.id': 'quota-' + client_id, 'enable.auto.commit': False, 'throttle_cb': on_throttle})
c.assign([TopicPartition(topic, 0, OFFSET_BEGINNING)])
start = time.time()
while time.time() - start < seconds:
    m = c.poll(0.1)
    if m is None or m.error(): continue
    b = int(time.time() * 10)
    buckets[b] = buckets.get(b, 0) + len(m.value())
end = time.time()
c.close()
print(json.dumps({'start': start, 'end': end, 'buckets': sorted(buckets.items()), 'throttles': throttles, 'errors': []}))
`;

export interface ClientRun {
  /** Wall-clock seconds. */
  start: number;
  end: number;
  /** [tenth of a second since the epoch, bytes delivered (or consumed) in it]. */
  buckets: [number, number][];
  /** [wall-clock seconds, throttle time in seconds] as librdkafka reported them (ThrottleEvent.throttle_time). */
  throttles: [number, number][];
  errors: string[];
}

function parse(stdout: string): ClientRun {
  const lines = stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]!) as ClientRun;
}

/** `extra`: more librdkafka settings (security.protocol, sasl.*, ssl.ca.location, ...). */
export async function greedyProducer(
  bootstrap: string,
  topic: string,
  clientId: string,
  seconds: number,
  valueBytes = 10_000,
  extra: Record<string, string> = {},
): Promise<ClientRun> {
  const res = await run(PYTHON, ['-c', GREEDY_PRODUCER, bootstrap, topic, clientId, String(seconds), String(valueBytes), JSON.stringify(extra)], {
    timeoutMs: (seconds + 60) * 1000,
  });
  if (res.code !== 0) throw new Error(`greedy producer failed: ${res.stderr}`);
  return parse(res.stdout);
}

export async function meteredConsumer(bootstrap: string, topic: string, clientId: string, seconds: number): Promise<ClientRun> {
  const res = await run(PYTHON, ['-c', CONSUMER, bootstrap, topic, clientId, String(seconds)], { timeoutMs: (seconds + 60) * 1000 });
  if (res.code !== 0) throw new Error(`consumer failed: ${res.stderr}`);
  return parse(res.stdout);
}

/** Bytes per second delivered between two wall-clock times (seconds). */
export function rateBetween(r: ClientRun, from: number, to: number): number {
  let bytes = 0;
  for (const [tenth, n] of r.buckets) if (tenth / 10 >= from && tenth / 10 < to) bytes += n;
  return bytes / (to - from);
}

export const MB = 1024 * 1024;
