# A confluent-kafka (librdkafka) group consumer for crash tests. argv: bootstrap topic group delay_ms
# [session_timeout_ms, default 6000].
# Prints "<partition> <offset>" per message and flushes, and only then stores the offset for the
# next auto-commit: at-least-once, so a SIGKILL can only cause re-delivery, never a gap.
import sys, time
from confluent_kafka import Consumer

bootstrap, topic, group, delay = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
session = int(sys.argv[5]) if len(sys.argv) > 5 else 6000
c = Consumer({
    'bootstrap.servers': bootstrap,
    'group.id': group,
    'auto.offset.reset': 'earliest',
    'enable.auto.commit': True,
    'auto.commit.interval.ms': 100,
    'enable.auto.offset.store': False,
    'session.timeout.ms': session,
    'heartbeat.interval.ms': min(3000, session // 2),  # librdkafka's default for the default session
    'api.version.request': True,
})
c.subscribe([topic])
while True:
    m = c.poll(0.2)
    if m is None or m.error():
        continue
    sys.stdout.write('%d %d\n' % (m.partition(), m.offset()))
    sys.stdout.flush()
    c.store_offsets(m)
    if delay > 0:
        time.sleep(delay / 1000.0)
