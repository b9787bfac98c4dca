/*
 * A small librdkafka load generator for Fjord's produce/consume benchmark (bench/produce-consume.ts
 * compiles it at bench time: gcc -O2 -o <tmp>/rdkafka-perf bench/rdkafka-perf.c -lrdkafka -lpthread).
 * kcat reads and formats one record at a time, which made the client the bottleneck; this program
 * sends one shared payload and counts records without touching them (consume takes them off the
 * consumer queue in batches, see run_consume).
 *
 *   rdkafka-perf produce -b HOST:PORT -t TOPIC -n RECORDS -s BYTES [-a ACKS] [-l LINGER_MS] [-B BATCH_BYTES]
 *   rdkafka-perf consume -b HOST:PORT -t TOPIC -n RECORDS
 *   rdkafka-perf latency -b HOST:PORT -t TOPIC -r RECORDS_PER_S -d SECONDS -s BYTES [-a ACKS] [-l LINGER_MS] [-w WARMUP_S]
 *   rdkafka-perf e2e -b HOST:PORT -t TOPIC -r RECORDS_PER_S -d SECONDS -s BYTES [-a ACKS] [-l LINGER_MS] [-w WARMUP_S] [-p PARTITION]
 *   rdkafka-perf txn -b HOST:PORT -t TOPIC -n RECORDS -s BYTES -T RECORDS_PER_TXN -i TRANSACTIONAL_ID [-l LINGER_MS] [-B BATCH_BYTES]
 *   extra librdkafka properties: -X name=value (repeatable)
 *
 * Prints one JSON line on stdout. Throughput is measured from the first send (or the partition
 * assignment) to the last delivery report (or the last record), so it includes the tail.
 */
#include <librdkafka/rdkafka.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const char *detail) {
  fprintf(stderr, "rdkafka-perf: %s: %s\n", what, detail);
  exit(1);
}

static void set(rd_kafka_conf_t *conf, const char *name, const char *value) {
  char err[512];
  if (rd_kafka_conf_set(conf, name, value, err, sizeof err) != RD_KAFKA_CONF_OK) die(name, err);
}

struct options {
  const char *mode, *brokers, *topic, *acks, *linger, *batch, *txn_id;
  long records, size, rate, seconds, warmup, per_txn, partition;
  const char *extra[32];
  int extras;
};

/* Delivery report state, shared by the callback and the main thread (latency mode: the poll thread). */
static volatile long delivered, failed;
static double last_delivery;
static double *sent_at; /* latency mode: send time per record, indexed by the message opaque */
static double *latency;

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque) {
  (void)rk;
  (void)opaque;
  double t = now_s();
  if (m->err) {
    if (failed++ < 5) fprintf(stderr, "rdkafka-perf: delivery failed: %s\n", rd_kafka_err2str(m->err));
  } else {
    delivered++;
  }
  if (latency) {
    long i = (long)(intptr_t)m->_private;
    latency[i] = t - sent_at[i];
  }
  last_delivery = t;
}

static int on_stats(rd_kafka_t *rk, char *json, size_t len, void *opaque);

/* Set while the e2e producer is created: librdkafka's statistics each second go to on_stats. */
static int producer_stats;

static rd_kafka_t *new_client(rd_kafka_type_t type, const struct options *o) {
  rd_kafka_conf_t *conf = rd_kafka_conf_new();
  char err[512];
  set(conf, "bootstrap.servers", o->brokers);
  if (type == RD_KAFKA_PRODUCER) {
    set(conf, "acks", o->acks);
    set(conf, "linger.ms", o->linger);
    set(conf, "batch.size", o->batch);
    set(conf, "compression.type", "none");
    set(conf, "queue.buffering.max.kbytes", "1048576");
    set(conf, "queue.buffering.max.messages", "1000000");
    if (o->txn_id) set(conf, "transactional.id", o->txn_id);
    rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
    if (producer_stats) {
      set(conf, "statistics.interval.ms", "1000");
      rd_kafka_conf_set_stats_cb(conf, on_stats);
    }
  } else {
    /* No group: partitions are assigned by hand, nothing is committed. */
    set(conf, "group.id", "rdkafka-perf");
    set(conf, "enable.auto.commit", "false");
    /* A Fetch response holds at most 10 MiB on any number of partitions, as one partition's does
     * (max.partition.fetch.bytes). librdkafka receives each response into one malloc'd buffer that
     * lives until its last record is consumed; glibc serves an allocation above its largest mmap
     * threshold (32 MiB) with a fresh mmap, and up to 8 x 10 MiB of 8 partitions filled 50 MB
     * responses: every page of every response was faulted in anew (about 256 minor faults per MB,
     * against 40-90 on 1 partition), and the client, not the broker, was the limit (bench/RESULTS.md,
     * "Issue 26: consume on 8 partitions"). The e2e consumer keeps the 50 MB it had. */
    set(conf, "fetch.max.bytes", strcmp(o->mode, "consume") == 0 ? "10485760" : "52428800");
    set(conf, "max.partition.fetch.bytes", "10485760");
    set(conf, "queued.max.messages.kbytes", "1048576");
    set(conf, "queued.min.messages", "1000000");
  }
  for (int i = 0; i < o->extras; i++) {
    char name[256];
    const char *eq = strchr(o->extra[i], '=');
    if (!eq || eq - o->extra[i] >= (long)sizeof name) die("-X expects name=value", o->extra[i]);
    memcpy(name, o->extra[i], eq - o->extra[i]);
    name[eq - o->extra[i]] = 0;
    set(conf, name, eq + 1);
  }
  rd_kafka_t *rk = rd_kafka_new(type, conf, err, sizeof err);
  if (!rk) die("rd_kafka_new", err);
  return rk;
}

static void produce_one(rd_kafka_t *rk, const struct options *o, void *payload, long index) {
  for (;;) {
    rd_kafka_resp_err_t e = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(o->topic), RD_KAFKA_V_VALUE(payload, (size_t)o->size),
                                              RD_KAFKA_V_OPAQUE((void *)(intptr_t)index), RD_KAFKA_V_END);
    if (e == RD_KAFKA_RESP_ERR_NO_ERROR) return;
    if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL) die("produce", rd_kafka_err2str(e));
    rd_kafka_poll(rk, 1); /* the local queue is full: serve delivery reports, then retry */
  }
}

static void run_produce(const struct options *o) {
  rd_kafka_t *rk = new_client(RD_KAFKA_PRODUCER, o);
  char *payload = malloc(o->size);
  memset(payload, 'x', o->size);
  double start = now_s();
  for (long i = 0; i < o->records; i++) {
    produce_one(rk, o, payload, i);
    if ((i & 1023) == 0) rd_kafka_poll(rk, 0);
  }
  while (delivered + failed < o->records) rd_kafka_poll(rk, 100);
  double secs = last_delivery - start;
  printf("{\"mode\":\"produce\",\"records\":%ld,\"failed\":%ld,\"bytes\":%ld,\"seconds\":%.4f,\"records_per_s\":%.0f,\"mb_per_s\":%.2f}\n",
         (long)delivered, (long)failed, delivered * o->size, secs, delivered / secs, delivered * o->size / secs / 1048576.0);
  rd_kafka_destroy(rk);
  free(payload);
}

/* Records taken off the consumer queue per call in consume mode. */
#define CONSUME_BATCH 4096

static void run_consume(const struct options *o) {
  rd_kafka_t *rk = new_client(RD_KAFKA_CONSUMER, o);
  rd_kafka_topic_t *t = rd_kafka_topic_new(rk, o->topic, NULL);
  const struct rd_kafka_metadata *md;
  rd_kafka_resp_err_t e = rd_kafka_metadata(rk, 0, t, &md, 10000);
  if (e) die("metadata", rd_kafka_err2str(e));
  if (md->topic_cnt != 1 || md->topics[0].err) die("metadata", "topic not found");
  rd_kafka_topic_partition_list_t *parts = rd_kafka_topic_partition_list_new(md->topics[0].partition_cnt);
  /* Each partition is assigned at its log start offset, asked for before the clock starts, not at
   * RD_KAFKA_OFFSET_BEGINNING: with the logical offset librdkafka sends its own ListOffsets after
   * the assignment, and now and then (about one run in 25 here) that request went out 500 ms
   * after the assignment (librdkafka's debug log: nothing in between), half a second counted as
   * consuming (bench/RESULTS.md, "Issue 26: what limits consume"). The records read are the
   * same; the clock still covers the assignment and the first Fetch. */
  for (int i = 0; i < md->topics[0].partition_cnt; i++) {
    int32_t id = md->topics[0].partitions[i].id;
    int64_t low = 0, high = 0;
    if ((e = rd_kafka_query_watermark_offsets(rk, o->topic, id, &low, &high, 10000))) die("watermarks", rd_kafka_err2str(e));
    rd_kafka_topic_partition_list_add(parts, o->topic, id)->offset = low;
  }
  rd_kafka_metadata_destroy(md);
  rd_kafka_topic_destroy(t);
  double start = now_s();
  if ((e = rd_kafka_assign(rk, parts))) die("assign", rd_kafka_err2str(e));
  /* Records come off the consumer queue in batches (rd_kafka_consume_batch_queue), the way a
   * throughput-minded application reads them: one queue lock and one clock read per batch instead
   * of per record. rd_kafka_consumer_poll per record took about 40% of the application thread in
   * its locks and clock reads (librdkafka's timeout bookkeeping and this loop's own now_s()), CPU
   * the broker and librdkafka's network thread need on a 2-core machine (bench/RESULTS.md, "Issue
   * 26: what limits consume"). Every record is still delivered to this loop and counted with its
   * value's length. */
  rd_kafka_queue_t *q = rd_kafka_queue_get_consumer(rk);
  rd_kafka_message_t *batch[CONSUME_BATCH];
  long count = 0, bytes = 0;
  double last = start;
  while (count < o->records) {
    /* No more than are left: the call waits (up to its timeout) until it has as many as it may
     * take, so asking for a full batch at the end would time the timeout, not the last record. */
    long left = o->records - count;
    ssize_t got = rd_kafka_consume_batch_queue(q, 1000, batch, left < CONSUME_BATCH ? (size_t)left : CONSUME_BATCH);
    if (got < 0) die("consume", rd_kafka_err2str(rd_kafka_last_error()));
    long before = count;
    for (ssize_t i = 0; i < got; i++) {
      rd_kafka_message_t *m = batch[i];
      if (m->err) {
        if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) die("consume", rd_kafka_message_errstr(m));
      } else {
        count++;
        bytes += (long)m->len;
      }
      rd_kafka_message_destroy(m);
    }
    if (count > before) last = now_s();
    else if (now_s() - last > 30) die("consume", "no record for 30 s");
  }
  rd_kafka_queue_destroy(q);
  double secs = last - start;
  printf("{\"mode\":\"consume\",\"records\":%ld,\"bytes\":%ld,\"seconds\":%.4f,\"records_per_s\":%.0f,\"mb_per_s\":%.2f}\n", count, bytes,
         secs, count / secs, bytes / secs / 1048576.0);
  rd_kafka_topic_partition_list_destroy(parts);
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
}

static volatile int polling = 1;
static void *poll_loop(void *rk) {
  while (polling) rd_kafka_poll(rk, 50);
  return NULL;
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Fixed-rate sends; a second thread serves delivery reports as soon as they arrive so the
 * measured latency is send -> acknowledgement, not send -> our next poll. The first `warmup`
 * seconds are sent the same way but left out of the figures (connection set-up, JIT warm-up). */
static void run_latency(const struct options *o) {
  long skip = o->rate * o->warmup;
  long n = o->rate * (o->seconds + o->warmup);
  sent_at = calloc(n, sizeof(double));
  latency = calloc(n, sizeof(double));
  rd_kafka_t *rk = new_client(RD_KAFKA_PRODUCER, o);
  char *payload = malloc(o->size);
  memset(payload, 'x', o->size);
  /* Warm up: metadata and the connection, so the first record does not pay for them. */
  produce_one(rk, o, payload, 0);
  rd_kafka_flush(rk, 10000);
  delivered = failed = 0;
  pthread_t poller;
  pthread_create(&poller, NULL, poll_loop, rk);
  struct timespec due;
  clock_gettime(CLOCK_MONOTONIC, &due);
  long step_ns = 1000000000L / o->rate;
  double start = now_s();
  for (long i = 0; i < n; i++) {
    due.tv_nsec += step_ns;
    while (due.tv_nsec >= 1000000000L) {
      due.tv_nsec -= 1000000000L;
      due.tv_sec++;
    }
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL);
    sent_at[i] = now_s();
    produce_one(rk, o, payload, i);
  }
  double sending = now_s() - sent_at[skip];
  rd_kafka_flush(rk, 30000);
  polling = 0;
  pthread_join(poller, NULL);
  if (getenv("RDKAFKA_PERF_SLOW_MS")) { /* debugging aid: when were the slow ones sent? */
    double slow = atof(getenv("RDKAFKA_PERF_SLOW_MS")) / 1e3;
    for (long i = 0; i < n; i++)
      if (latency[i] > slow) fprintf(stderr, "slow: sent at %.4f s, %.3f ms\n", sent_at[i] - start, latency[i] * 1e3);
  }
  double *measured = latency + skip;
  n -= skip;
  qsort(measured, n, sizeof(double), by_value);
  printf("{\"mode\":\"latency\",\"records\":%ld,\"warmup_records\":%ld,\"failed\":%ld,\"rate\":%.0f,\"p50_ms\":%.3f,\"p99_ms\":%.3f,"
         "\"p999_ms\":%.3f,\"max_ms\":%.3f}\n",
         n, skip, (long)failed, n / sending, measured[n / 2] * 1e3, measured[(long)(n * 0.99)] * 1e3, measured[(long)(n * 0.999)] * 1e3,
         measured[n - 1] * 1e3);
  rd_kafka_destroy(rk);
}


/* End-to-end mode: a consumer in this process reads the partition from its end offset (taken
 * before the first send) and timestamps each record on receipt; the record's key is its send
 * index, so latency = receipt - send time on one monotonic clock. Fixed-rate sends as in
 * `latency` (to one partition, -p), delivery reports served by a second thread, so the
 * acknowledgement latency is reported beside the end-to-end one. The consumer fetches with
 * fetch.wait.max.ms=500 (librdkafka's default): a broker that does not wake a waiting fetch
 * when the append lands shows up as receipt latencies near 500 ms. */
static double *received_lat;
static volatile long received;
static volatile double last_receipt;

/* The producer's own view of where a record waits (librdkafka's statistics, statistics.interval.ms
 * = 1000): int_latency (produce() to the record leaving the partition queue for a request),
 * outbuf_latency (a request waiting in the broker connection's output buffer) and rtt (request
 * written to response read: the broker's time plus the network and the client's reading). Each
 * 1-second report inside the measured window is read; the window's figure is the worst second's
 * p99 and p99.99 (librdkafka gives per-interval percentiles, which cannot be merged), in ms. */
static const char *const STAT_NAMES[] = {"int_latency", "outbuf_latency", "rtt"};
enum { STATS = 3 };
static double stat_p99[STATS], stat_p9999[STATS];
static volatile double stats_from, stats_to; /* the measured window, on now_s()'s clock */

/* The value of "field": in the JSON object that starts at obj (a flat object of numbers). */
static double json_field(const char *obj, const char *field) {
  char key[40];
  snprintf(key, sizeof key, "\"%s\":", field);
  const char *end = strchr(obj, '}');
  const char *at = strstr(obj, key);
  return at && (!end || at < end) ? atof(at + strlen(key)) : 0;
}

static int on_stats(rd_kafka_t *rk, char *json, size_t len, void *opaque) {
  (void)rk, (void)len, (void)opaque;
  double t = now_s();
  if (stats_from == 0 || t < stats_from + 1 || (stats_to > 0 && t > stats_to + 0.5)) return 0;
  for (int s = 0; s < STATS; s++) {
    /* One object per broker connection (the bootstrap one has nothing): take the busiest. */
    char key[40];
    snprintf(key, sizeof key, "\"%s\":", STAT_NAMES[s]);
    double best_cnt = -1, p99 = 0, p9999 = 0;
    for (const char *at = strstr(json, key); at; at = strstr(at + 1, key)) {
      double cnt = json_field(at, "cnt");
      if (cnt > best_cnt) best_cnt = cnt, p99 = json_field(at, "p99"), p9999 = json_field(at, "p99_99");
    }
    if (p99 / 1e3 > stat_p99[s]) stat_p99[s] = p99 / 1e3;
    if (p9999 / 1e3 > stat_p9999[s]) stat_p9999[s] = p9999 / 1e3;
  }
  return 0;
}

struct e2e_consumer {
  rd_kafka_t *rk;
  long n;
  double deadline_after_last_send;
  volatile int sending_done;
  volatile double sending_end;
};

static void *consume_loop(void *arg) {
  struct e2e_consumer *c = arg;
  while (received < c->n) {
    rd_kafka_message_t *m = rd_kafka_consumer_poll(c->rk, 50);
    double t = now_s();
    if (!m) {
      if (c->sending_done && t - c->sending_end > c->deadline_after_last_send) break;
      continue;
    }
    if (!m->err && m->key_len == sizeof(int64_t)) {
      int64_t i;
      memcpy(&i, m->key, sizeof i);
      if (i >= 0 && i < c->n && received_lat[i] == 0) {
        received_lat[i] = t - sent_at[i];
        received++;
        last_receipt = t;
      }
    } else if (m->err && m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF) {
      fprintf(stderr, "rdkafka-perf: consume: %s\n", rd_kafka_message_errstr(m));
    }
    rd_kafka_message_destroy(m);
  }
  return NULL;
}

static void percentiles(const char *name, double *v, long n, int last) {
  qsort(v, n, sizeof(double), by_value);
  printf("\"%s_p50_ms\":%.3f,\"%s_p99_ms\":%.3f,\"%s_p999_ms\":%.3f,\"%s_max_ms\":%.3f%s", name, v[n / 2] * 1e3, name,
         v[(long)(n * 0.99)] * 1e3, name, v[(long)(n * 0.999)] * 1e3, name, v[n - 1] * 1e3, last ? "" : ",");
}

static void run_e2e(const struct options *o) {
  long skip = o->rate * o->warmup;
  long n = o->rate * (o->seconds + o->warmup);
  sent_at = calloc(n, sizeof(double));
  latency = calloc(n, sizeof(double));
  received_lat = calloc(n, sizeof(double));
  producer_stats = 1;
  rd_kafka_t *producer = new_client(RD_KAFKA_PRODUCER, o);
  producer_stats = 0;
  rd_kafka_t *consumer = new_client(RD_KAFKA_CONSUMER, o);
  char *payload = malloc(o->size);
  memset(payload, 'x', o->size);
  /* The consumer starts at the current end, so it sees every record sent from now on. */
  int64_t low, high;
  rd_kafka_resp_err_t e = rd_kafka_query_watermark_offsets(consumer, o->topic, (int32_t)o->partition, &low, &high, 10000);
  if (e) die("watermarks", rd_kafka_err2str(e));
  rd_kafka_topic_partition_list_t *parts = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(parts, o->topic, (int32_t)o->partition)->offset = high;
  if ((e = rd_kafka_assign(consumer, parts))) die("assign", rd_kafka_err2str(e));
  /* Producer warm-up (metadata, connection) with a record the consumer ignores (no 8-byte key). */
  rd_kafka_producev(producer, RD_KAFKA_V_TOPIC(o->topic), RD_KAFKA_V_PARTITION((int32_t)o->partition),
                    RD_KAFKA_V_VALUE(payload, (size_t)o->size), RD_KAFKA_V_OPAQUE((void *)(intptr_t)0), RD_KAFKA_V_END);
  rd_kafka_flush(producer, 10000);
  delivered = failed = 0;
  struct e2e_consumer c = {.rk = consumer, .n = n, .deadline_after_last_send = 10};
  pthread_t poller, reader;
  pthread_create(&reader, NULL, consume_loop, &c);
  pthread_create(&poller, NULL, poll_loop, producer);
  struct timespec due;
  clock_gettime(CLOCK_MONOTONIC, &due);
  long step_ns = 1000000000L / o->rate;
  stats_from = now_s() + o->warmup;
  for (long i = 0; i < n; i++) {
    due.tv_nsec += step_ns;
    while (due.tv_nsec >= 1000000000L) {
      due.tv_nsec -= 1000000000L;
      due.tv_sec++;
    }
    /* Sleep only when ahead of the schedule: at 100,000+ records/s a sleep call per record would
     * cap the rate; behind it, records go out back to back until the schedule is caught up. */
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec < due.tv_sec || (now.tv_sec == due.tv_sec && now.tv_nsec < due.tv_nsec))
      clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due, NULL);
    sent_at[i] = now_s();
    int64_t key = i;
    for (;;) {
      e = rd_kafka_producev(producer, RD_KAFKA_V_TOPIC(o->topic), RD_KAFKA_V_PARTITION((int32_t)o->partition),
                            RD_KAFKA_V_KEY(&key, sizeof key), RD_KAFKA_V_VALUE(payload, (size_t)o->size),
                            RD_KAFKA_V_OPAQUE((void *)(intptr_t)i), RD_KAFKA_V_END);
      if (e == RD_KAFKA_RESP_ERR_NO_ERROR) break;
      if (e != RD_KAFKA_RESP_ERR__QUEUE_FULL) die("produce", rd_kafka_err2str(e));
      usleep(100);
    }
  }
  double sending = now_s() - sent_at[skip];
  c.sending_end = stats_to = now_s();
  c.sending_done = 1;
  rd_kafka_flush(producer, 30000);
  polling = 0;
  pthread_join(poller, NULL);
  pthread_join(reader, NULL);
  if (getenv("RDKAFKA_PERF_SLOW_MS")) {
    double slow = atof(getenv("RDKAFKA_PERF_SLOW_MS")) / 1e3;
    for (long i = skip; i < n; i++)
      if (received_lat[i] > slow) fprintf(stderr, "slow: sent at %.4f s, e2e %.3f ms, ack %.3f ms\n", sent_at[i] - sent_at[0], received_lat[i] * 1e3, latency[i] * 1e3);
  }
  long measured = n - skip, got = 0;
  for (long i = skip; i < n; i++) if (received_lat[i] > 0) received_lat[skip + got++] = received_lat[i];
  /* Drain: from the last send to the last acknowledgement / receipt. A client that carried the
   * rate drains in about one round trip; one that queued drains its queue (seconds). */
  printf("{\"mode\":\"e2e\",\"records\":%ld,\"warmup_records\":%ld,\"failed\":%ld,\"received\":%ld,\"rate\":%.0f,"
         "\"ack_drain_ms\":%.3f,\"e2e_drain_ms\":%.3f,",
         measured, skip, (long)failed, got, measured / sending, (last_delivery - c.sending_end) * 1e3,
         got > 0 ? (last_receipt - c.sending_end) * 1e3 : -1.0);
  for (int s = 0; s < STATS; s++)
    printf("\"%s_p99_ms\":%.3f,\"%s_p9999_ms\":%.3f,", STAT_NAMES[s], stat_p99[s], STAT_NAMES[s], stat_p9999[s]);
  percentiles("ack", latency + skip, measured, 0);
  if (got > 0) percentiles("e2e", received_lat + skip, got, 1);
  else printf("\"e2e_p50_ms\":null");
  printf("}\n");
  if (got < measured) fprintf(stderr, "rdkafka-perf: e2e: %ld of %ld records not received\n", measured - got, measured);
  rd_kafka_topic_partition_list_destroy(parts);
  rd_kafka_consumer_close(consumer);
  rd_kafka_destroy(consumer);
  rd_kafka_destroy(producer);
  free(payload);
}

static void txn_check(rd_kafka_error_t *error, const char *what) {
  if (!error) return;
  fprintf(stderr, "rdkafka-perf: %s: %s%s\n", what, rd_kafka_error_string(error),
          rd_kafka_error_txn_requires_abort(error) ? " (abortable)" : rd_kafka_error_is_fatal(error) ? " (fatal)" : "");
  exit(1);
}

/* Transactions of `per_txn` records back to back: begin, produce, flush, commit. The flush is
 * timed apart from commit_transaction() so the commit figure is what the transaction adds
 * (EndTxn to the coordinator, its markers, the __transaction_state appends), not the wait for the
 * transaction's own records, which commit_transaction() would otherwise include. Throughput runs
 * from the first begin_transaction() to the end of the last commit; init_transactions() is left
 * out (reported on its own). */
static void run_txn(const struct options *o) {
  if (!o->txn_id || o->per_txn <= 0) die("txn", "-i TRANSACTIONAL_ID and -T RECORDS_PER_TXN are required");
  rd_kafka_t *rk = new_client(RD_KAFKA_PRODUCER, o);
  char *payload = malloc(o->size);
  memset(payload, 'x', o->size);
  double t0 = now_s();
  txn_check(rd_kafka_init_transactions(rk, 60000), "init_transactions");
  double init_s = now_s() - t0;
  /* Learn the topic's partitions before the clock starts: otherwise the first transaction waits
   * for librdkafka's 1 s topic scan before it asks for the new topic's metadata (a client start-up
   * cost, the same against any broker). */
  rd_kafka_topic_t *topic = rd_kafka_topic_new(rk, o->topic, NULL);
  const struct rd_kafka_metadata *md;
  rd_kafka_resp_err_t me = rd_kafka_metadata(rk, 0, topic, &md, 10000);
  if (me) die("metadata", rd_kafka_err2str(me));
  rd_kafka_metadata_destroy(md);
  long txns = (o->records + o->per_txn - 1) / o->per_txn;
  double *commit = calloc(txns, sizeof(double)), *flush = calloc(txns, sizeof(double));
  double start = now_s();
  long sent = 0;
  for (long t = 0; t < txns; t++) {
    txn_check(rd_kafka_begin_transaction(rk), "begin_transaction");
    for (long i = 0; i < o->per_txn && sent < o->records; i++, sent++) {
      produce_one(rk, o, payload, sent);
      if ((i & 1023) == 0) rd_kafka_poll(rk, 0);
    }
    double f0 = now_s();
    rd_kafka_resp_err_t e = rd_kafka_flush(rk, 60000);
    if (e) die("flush", rd_kafka_err2str(e));
    double c0 = now_s();
    txn_check(rd_kafka_commit_transaction(rk, 60000), "commit_transaction");
    double c1 = now_s();
    flush[t] = c0 - f0;
    commit[t] = c1 - c0;
  }
  double secs = now_s() - start;
  if (failed) die("txn", "some records failed");
  qsort(commit, txns, sizeof(double), by_value);
  qsort(flush, txns, sizeof(double), by_value);
  double commit_total = 0;
  for (long t = 0; t < txns; t++) commit_total += commit[t];
  printf("{\"mode\":\"txn\",\"records\":%ld,\"failed\":%ld,\"transactions\":%ld,\"bytes\":%ld,\"seconds\":%.4f,\"records_per_s\":%.0f,"
         "\"mb_per_s\":%.2f,\"init_ms\":%.3f,\"commit_p50_ms\":%.3f,\"commit_p99_ms\":%.3f,\"commit_max_ms\":%.3f,"
         "\"commit_share\":%.3f,\"flush_p50_ms\":%.3f,\"flush_p99_ms\":%.3f}\n",
         (long)delivered, (long)failed, txns, delivered * o->size, secs, delivered / secs, delivered * o->size / secs / 1048576.0,
         init_s * 1e3, commit[txns / 2] * 1e3, commit[(long)(txns * 0.99)] * 1e3, commit[txns - 1] * 1e3, commit_total / secs,
         flush[txns / 2] * 1e3, flush[(long)(txns * 0.99)] * 1e3);
  rd_kafka_topic_destroy(topic);
  rd_kafka_destroy(rk);
  free(payload);
  free(commit);
  free(flush);
}

int main(int argc, char **argv) {
  struct options o = {.acks = "1", .linger = "5", .batch = "1000000", .records = 100000, .size = 1024, .rate = 10000, .seconds = 5};
  if (argc < 2) die("usage", "rdkafka-perf produce|consume|latency|e2e|txn -b brokers -t topic [options] (see the source)");
  o.mode = argv[1];
  int c;
  optind = 2;
  while ((c = getopt(argc, argv, "b:t:n:s:a:l:B:r:d:w:X:T:i:p:")) != -1) {
    switch (c) {
      case 'b': o.brokers = optarg; break;
      case 't': o.topic = optarg; break;
      case 'n': o.records = atol(optarg); break;
      case 's': o.size = atol(optarg); break;
      case 'a': o.acks = optarg; break;
      case 'l': o.linger = optarg; break;
      case 'B': o.batch = optarg; break;
      case 'r': o.rate = atol(optarg); break;
      case 'd': o.seconds = atol(optarg); break;
      case 'w': o.warmup = atol(optarg); break;
      case 'T': o.per_txn = atol(optarg); break;
      case 'i': o.txn_id = optarg; break;
      case 'p': o.partition = atol(optarg); break;
      case 'X':
        if (o.extras == 32) die("-X", "too many");
        o.extra[o.extras++] = optarg;
        break;
      default: die("usage", "unknown option");
    }
  }
  if (!o.brokers || !o.topic) die("usage", "-b and -t are required");
  if (!strcmp(o.mode, "produce")) run_produce(&o);
  else if (!strcmp(o.mode, "consume")) run_consume(&o);
  else if (!strcmp(o.mode, "latency")) run_latency(&o);
  else if (!strcmp(o.mode, "e2e")) run_e2e(&o);
  else if (!strcmp(o.mode, "txn")) run_txn(&o);
  else die("unknown mode", o.mode);
  return 0;
}
