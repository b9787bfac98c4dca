/*
 * A NATS JetStream load generator for `npm run bench` (bench/suite/ compiles it at bench time:
 * gcc -O2 -o <tmp>/nats-perf bench/nats-perf.c -lnats -lpthread), the counterpart of
 * bench/rdkafka-perf.c: one shared payload, records counted without being touched.
 *
 *   nats-perf produce -u URL -t NAME -p STREAMS -n RECORDS -s BYTES [-m MAX_PENDING]
 *   nats-perf consume -u URL -t NAME -p STREAMS -n RECORDS
 *   nats-perf latency -u URL -t NAME -p STREAMS -r RECORDS_PER_S -d SECONDS -s BYTES [-w WARMUP_S] [-m MAX_PENDING]
 *   nats-perf delete -u URL -t NAME -p STREAMS   (removes the streams, so a repeat starts empty)
 *
 * A Kafka partition maps to a JetStream stream (the unit that orders and stores messages, with
 * its own file store): NAME_0 .. NAME_{STREAMS-1}, subjects NAME.0 .. NAME.{STREAMS-1}, file
 * storage, one replica. produce creates the streams when missing and sends record i to stream
 * i % STREAMS. JetStream acknowledges a publish once its one replica stored it, which is what
 * Kafka's acks=all means for RF 1, so acks=1 and acks=all map to the same NATS run.
 *
 * Publishing is asynchronous (js_PublishAsync) with at most MAX_PENDING (default 8192) publishes
 * awaiting their ack. That bound does not limit the server: 8192 records of 100 B - 1 KiB are
 * 0.8 - 8 MiB in flight, hundreds of times what loopback's round trip (tens of microseconds at a
 * few hundred MB/s, i.e. some tens of KiB) needs to keep the server busy; the client only waits
 * when the server has not acknowledged 8192 records, i.e. when the server is the bottleneck.
 * consume reads every stream from its first message with an ordered push consumer (no acks,
 * flow control) and counts records until RECORDS arrived.
 * latency publishes at a fixed rate; each payload carries its send time, read back in the ack
 * handler, so the latency is publish -> stored -> acknowledged.
 *
 * Prints one JSON line on stdout; throughput runs from the first publish (or the subscription)
 * to the last ack (or record), tail included.
 */
#include <nats/nats.h>
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
  fprintf(stderr, "nats-perf: %s: %s\n", what, detail);
  exit(1);
}

static void check(natsStatus s, const char *what) {
  if (s != NATS_OK) die(what, natsStatus_GetText(s));
}

struct options {
  const char *mode, *url, *name;
  long streams, records, size, max_pending, rate, seconds, warmup;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cond = PTHREAD_COND_INITIALIZER;
static volatile long acked, failed, received;
static double last_event;
static double *latency; /* latency mode: per measured record */
static long latency_count, latency_cap;
static double measure_from; /* latency mode: records sent before this are warm-up */

static void on_ack(jsCtx *js, natsMsg *msg, jsPubAck *pa, jsPubAckErr *pae, void *closure) {
  (void)js;
  (void)closure;
  double t = now_s();
  pthread_mutex_lock(&lock);
  if (pa != NULL) {
    acked++;
  } else if (failed++ < 5) {
    fprintf(stderr, "nats-perf: publish failed: %s\n", pae != NULL ? pae->ErrText : "?");
  }
  if (latency != NULL && natsMsg_GetDataLength(msg) >= (int)sizeof(double)) {
    double sent;
    memcpy(&sent, natsMsg_GetData(msg), sizeof sent);
    if (sent >= measure_from && latency_count < latency_cap) latency[latency_count++] = t - sent;
  }
  last_event = t;
  pthread_mutex_unlock(&lock);
  natsMsg_Destroy(msg);
}

static void on_message(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure) {
  (void)nc;
  (void)sub;
  long target = *(long *)closure;
  natsMsg_Destroy(msg);
  pthread_mutex_lock(&lock);
  received++;
  if (received >= target) {
    last_event = now_s();
    pthread_cond_signal(&done_cond);
  }
  pthread_mutex_unlock(&lock);
}

static jsCtx *connect_js(const struct options *o, natsConnection **nc, int with_ack_handler) {
  check(natsConnection_ConnectTo(nc, o->url), "connect");
  jsOptions jo;
  jsOptions_Init(&jo);
  jo.Wait = 60000;
  if (with_ack_handler) {
    jo.PublishAsync.MaxPending = o->max_pending;
    jo.PublishAsync.AckHandler = on_ack;
  }
  jsCtx *js;
  check(natsConnection_JetStream(&js, *nc, &jo), "JetStream context");
  return js;
}

static void ensure_streams(jsCtx *js, const struct options *o) {
  for (long i = 0; i < o->streams; i++) {
    char name[256], subject[256];
    snprintf(name, sizeof name, "%s_%ld", o->name, i);
    snprintf(subject, sizeof subject, "%s.%ld", o->name, i);
    const char *subjects[1] = {subject};
    jsStreamConfig sc;
    jsStreamConfig_Init(&sc);
    sc.Name = name;
    sc.Subjects = subjects;
    sc.SubjectsLen = 1;
    sc.Storage = js_FileStorage;
    sc.Replicas = 1;
    jsErrCode jerr = 0;
    natsStatus s = js_AddStream(NULL, js, &sc, NULL, &jerr);
    if (s != NATS_OK && jerr != JSStreamNameExistErr) die("add stream", natsStatus_GetText(s));
  }
}

static void wait_published(jsCtx *js) {
  jsPubOptions po;
  jsPubOptions_Init(&po);
  po.MaxWait = 120000;
  check(js_PublishAsyncComplete(js, &po), "waiting for acks");
}

static void publish(jsCtx *js, const struct options *o, char **subjects, long i, const char *payload) {
  natsStatus s;
  /* MAX_PENDING reached: the library waits StallWait ms, then returns a timeout; try again. */
  while ((s = js_PublishAsync(js, subjects[i % o->streams], payload, (int)o->size, NULL)) == NATS_TIMEOUT) {
  }
  check(s, "publish");
}

static char **subject_names(const struct options *o) {
  char **subjects = calloc((size_t)o->streams, sizeof *subjects);
  for (long i = 0; i < o->streams; i++) {
    subjects[i] = malloc(256);
    snprintf(subjects[i], 256, "%s.%ld", o->name, i);
  }
  return subjects;
}

static void run_produce(const struct options *o) {
  natsConnection *nc;
  jsCtx *js = connect_js(o, &nc, 1);
  ensure_streams(js, o);
  char **subjects = subject_names(o);
  char *payload = malloc((size_t)o->size);
  memset(payload, 'x', (size_t)o->size);
  double start = now_s();
  for (long i = 0; i < o->records; i++) publish(js, o, subjects, i, payload);
  wait_published(js);
  double secs = last_event - start;
  printf("{\"mode\":\"produce\",\"records\":%ld,\"failed\":%ld,\"bytes\":%ld,\"seconds\":%.4f,\"records_per_s\":%.0f,\"mb_per_s\":%.2f}\n",
         (long)acked, (long)failed, acked * o->size, secs, acked / secs, acked * o->size / secs / 1048576.0);
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
}

static void run_consume(const struct options *o) {
  natsConnection *nc;
  jsCtx *js = connect_js(o, &nc, 0);
  natsSubscription **subs = calloc((size_t)o->streams, sizeof *subs);
  char **subjects = subject_names(o);
  long target = o->records;
  double start = now_s();
  for (long i = 0; i < o->streams; i++) {
    jsSubOptions so;
    jsSubOptions_Init(&so);
    so.Ordered = true;
    so.Config.DeliverPolicy = js_DeliverAll;
    jsErrCode jerr = 0;
    check(js_Subscribe(&subs[i], js, subjects[i], on_message, &target, NULL, &so, &jerr), "subscribe");
    /* No client-side limit: a slow-consumer drop would reset the ordered consumer. */
    check(natsSubscription_SetPendingLimits(subs[i], -1, -1), "pending limits");
  }
  pthread_mutex_lock(&lock);
  while (received < target) {
    struct timespec deadline;
    clock_gettime(CLOCK_REALTIME, &deadline);
    deadline.tv_sec += 60;
    long before = received;
    pthread_cond_timedwait(&done_cond, &lock, &deadline);
    if (received == before && received < target) die("consume", "no record for 60 s");
  }
  pthread_mutex_unlock(&lock);
  double secs = last_event - start;
  printf("{\"mode\":\"consume\",\"records\":%ld,\"bytes\":%ld,\"seconds\":%.4f,\"records_per_s\":%.0f,\"mb_per_s\":%.2f}\n", (long)received,
         received * o->size, secs, received / secs, received * o->size / secs / 1048576.0);
  for (long i = 0; i < o->streams; i++) natsSubscription_Destroy(subs[i]);
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
}

static void run_delete(const struct options *o) {
  natsConnection *nc;
  jsCtx *js = connect_js(o, &nc, 0);
  for (long i = 0; i < o->streams; i++) {
    char name[256];
    snprintf(name, sizeof name, "%s_%ld", o->name, i);
    jsErrCode jerr = 0;
    natsStatus s = js_DeleteStream(js, name, NULL, &jerr);
    if (s != NATS_OK && jerr != JSStreamNotFoundErr) die("delete stream", natsStatus_GetText(s));
  }
  printf("{\"mode\":\"delete\",\"streams\":%ld}\n", o->streams);
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
}

static int by_value(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void run_latency(const struct options *o) {
  natsConnection *nc;
  jsCtx *js = connect_js(o, &nc, 1);
  ensure_streams(js, o);
  char **subjects = subject_names(o);
  if (o->size < (long)sizeof(double)) die("latency", "-s must be at least 8 bytes (the send time)");
  char *payload = malloc((size_t)o->size);
  memset(payload, 'x', (size_t)o->size);
  long total = o->rate * (o->seconds + o->warmup);
  latency_cap = o->rate * o->seconds + 1;
  latency = calloc((size_t)latency_cap, sizeof *latency);
  double start = now_s();
  measure_from = start + (double)o->warmup;
  for (long i = 0; i < total; i++) {
    double due = start + (double)i / (double)o->rate;
    double t;
    while ((t = now_s()) < due) {
      if (due - t > 0.0002) usleep(100);
    }
    memcpy(payload, &t, sizeof t);
    publish(js, o, subjects, i, payload);
  }
  wait_published(js);
  qsort(latency, (size_t)latency_count, sizeof *latency, by_value);
#define PCT(p) (latency_count > 0 ? latency[(long)((p) * (latency_count - 1))] * 1000.0 : 0.0)
  printf("{\"mode\":\"latency\",\"rate\":%ld,\"records\":%ld,\"failed\":%ld,\"p50_ms\":%.3f,\"p99_ms\":%.3f,\"p999_ms\":%.3f,\"max_ms\":%.3f}\n", o->rate,
         latency_count, (long)failed, PCT(0.5), PCT(0.99), PCT(0.999), PCT(1.0));
  jsCtx_Destroy(js);
  natsConnection_Destroy(nc);
}

int main(int argc, char **argv) {
  if (argc < 2) die("usage", "nats-perf produce|consume|latency -u URL -t NAME -p STREAMS ...");
  struct options o = {.mode = argv[1], .url = "nats://127.0.0.1:4222", .name = "bench", .streams = 1, .size = 1024, .max_pending = 8192,
                      .rate = 1000, .seconds = 5, .warmup = 1};
  int c;
  optind = 2;
  while ((c = getopt(argc, argv, "u:t:p:n:s:m:r:d:w:")) != -1) {
    switch (c) {
    case 'u': o.url = optarg; break;
    case 't': o.name = optarg; break;
    case 'p': o.streams = atol(optarg); break;
    case 'n': o.records = atol(optarg); break;
    case 's': o.size = atol(optarg); break;
    case 'm': o.max_pending = atol(optarg); break;
    case 'r': o.rate = atol(optarg); break;
    case 'd': o.seconds = atol(optarg); break;
    case 'w': o.warmup = atol(optarg); break;
    default: die("unknown option", argv[optind - 1]);
    }
  }
  if (o.streams < 1) die("-p", "at least one stream");
  if (strcmp(o.mode, "produce") == 0) run_produce(&o);
  else if (strcmp(o.mode, "consume") == 0) run_consume(&o);
  else if (strcmp(o.mode, "latency") == 0) run_latency(&o);
  else if (strcmp(o.mode, "delete") == 0) run_delete(&o);
  else die("unknown mode", o.mode);
  nats_Close();
  return 0;
}
