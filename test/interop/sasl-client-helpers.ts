/**
 * librdkafka (kcat, confluent-kafka) over SASL listeners, shared by the SASL_PLAINTEXT and SASL_SSL
 * tests: kcat's -X arguments, and a confluent-kafka script that produces ten records and reads them
 * back in a group, or (topic "-") only reports whether authentication failed.
 */

/** kcat arguments for a SASL listener; `extra` adds librdkafka settings (e.g. ssl.ca.location). */
export function kcatSasl(
  bootstrap: string,
  protocol: 'SASL_PLAINTEXT' | 'SASL_SSL',
  mechanism: string,
  user: string,
  password: string,
  extra: Record<string, string> = {},
): string[] {
  const args = [
    '-b',
    bootstrap,
    '-X',
    `security.protocol=${protocol}`,
    '-X',
    `sasl.mechanisms=${mechanism}`,
    '-X',
    `sasl.username=${user}`,
    '-X',
    `sasl.password=${password}`,
  ];
  for (const [k, v] of Object.entries(extra)) args.push('-X', `${k}=${v}`);
  return args;
}

/**
 * argv: bootstrap mechanism user password topic [JSON of extra librdkafka settings]. Prints the ten
 * values read, comma-separated; with topic "-", AUTH_ERROR or NO_ERROR and the first error.
 */
export const CONFLUENT_SASL_SCRIPT = `
import sys, json
from confluent_kafka import Producer, Consumer, KafkaError
bootstrap, mechanism, user, password, topic = sys.argv[1:6]
extra = json.loads(sys.argv[6]) if len(sys.argv) > 6 else {}
conf = dict({'bootstrap.servers': bootstrap, 'security.protocol': 'SASL_PLAINTEXT', 'sasl.mechanisms': mechanism, 'sasl.username': user, 'sasl.password': password}, **extra)
errors = []
if topic == '-':
    p = Producer(dict(conf, error_cb=lambda e: errors.append(e)))
    for _ in range(50):
        p.poll(0.1)
        if any(e.code() == KafkaError._AUTHENTICATION for e in errors): break
    print('AUTH_ERROR' if any(e.code() == KafkaError._AUTHENTICATION for e in errors) else 'NO_ERROR', [e.str() for e in errors][:1])
    sys.exit(0)
p = Producer(conf)
for i in range(10): p.produce(topic, value=('v%d' % i).encode())
assert p.flush(30) == 0
c = Consumer(dict(conf, **{'group.id': 'g-' + topic, 'auto.offset.reset': 'earliest'}))
c.subscribe([topic])
got = []
while len(got) < 10:
    m = c.poll(30)
    assert m is not None, 'timed out'
    assert m.error() is None, m.error()
    got.append(m.value().decode())
c.close()
print(','.join(got))
`;

/**
 * argv: bootstrap group topic [JSON of extra librdkafka settings]. Subscribes in the group and
 * prints the first error's name (e.g. GROUP_AUTHORIZATION_FAILED) or "GOT v1,v2" with the values
 * of the first batch, within 20 s.
 */
export const CONFLUENT_CONSUME_ONE_SCRIPT = `
import sys, json, time
from confluent_kafka import Consumer
extra = json.loads(sys.argv[4]) if len(sys.argv) > 4 else {}
c = Consumer(dict({'bootstrap.servers': sys.argv[1], 'group.id': sys.argv[2], 'auto.offset.reset': 'earliest', 'enable.auto.commit': False}, **extra))
c.subscribe([sys.argv[3]])
got = []
err = None
deadline = time.time() + 20
while time.time() < deadline and not got and err is None:
    m = c.poll(0.5)
    if m is None: continue
    if m.error(): err = m.error().name(); break
    got.append(m.value().decode())
c.close()
print(err if err else 'GOT ' + ','.join(got))
`;
