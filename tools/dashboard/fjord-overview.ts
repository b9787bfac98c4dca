/**
 * The Fjord overview dashboard for Grafana 10 (dashboards/fjord-overview.json is this module's
 * output: regenerate it with `npx tsx tools/dashboard/generate.ts` after editing here;
 * test/server/metrics/dashboard.test.ts fails while they differ, and checks that every metric
 * queried here is on a live broker's /metrics).
 *
 * Every query reads the names docs/operations.md lists (the JMX exporter's Kafka names,
 * kafka-exporter's lag names, prom-client's process names), so the panels also work on a Kafka
 * cluster scraped through the JMX exporter, where the names are the same.
 */
import { layout, queryVariable, stat, table, timeseries, type Panel } from './grafana.js';

/** The broker(s) chosen in the `instance` variable (Prometheus's target label). */
const INSTANCE = 'instance=~"$instance"';
const TOPIC = 'topic=~"$topic"';
const GROUP = 'consumergroup=~"$consumergroup"';
const REQUEST = 'request=~"$request"';
/** Grafana's rate window: at least four scrape intervals. */
const WINDOW = '[$__rate_interval]';

/** The rate of a counter summed by `by` (nothing: one total), over the selected brokers. */
function rate(metric: string, by: string, ...matchers: string[]): string {
  const sel = `${metric}{${[INSTANCE, ...matchers].join(', ')}}`;
  return `${by ? `sum by (${by}) ` : 'sum'}(rate(${sel}${WINDOW}))`;
}

/** A counter exported per topic (`topic` label) and for all topics (no label): the selected topics, and the total. */
function perTopicAndTotal(metric: string): { expr: string; legend: string }[] {
  return [
    { expr: rate(metric, 'topic', TOPIC), legend: '{{topic}}' },
    { expr: rate(metric, '', 'topic=""'), legend: 'all topics' },
  ];
}

/** A mean time from a summary's or histogram's `_sum` and `_count`. */
function mean(family: string, by: string, ...matchers: string[]): string {
  return `${rate(`${family}_sum`, by, ...matchers)} / ${rate(`${family}_count`, by, ...matchers)}`;
}

const cluster: Panel[] = [
  stat(
    'Active controllers',
    { expr: 'sum(kafka_controller_kafkacontroller_activecontrollercount)' },
    { w: 4, h: 4, green: 1, red: 2, description: 'Brokers acting as controller: exactly 1 in a healthy cluster (embedded mode: the broker itself).' },
  ),
  stat(
    'Brokers',
    { expr: 'sum(kafka_controller_kafkacontroller_activebrokercount)' },
    { w: 4, h: 4, description: 'Brokers registered, as the active controller counts them.' },
  ),
  stat(
    'Under-replicated partitions',
    { expr: 'sum(kafka_server_replicamanager_underreplicatedpartitions)' },
    { w: 4, h: 4, red: 1, description: 'Partitions whose ISR is smaller than their replica list (a broker down or lagging).' },
  ),
  stat(
    'Under min ISR',
    { expr: 'sum(kafka_server_replicamanager_underminisrpartitioncount)' },
    { w: 4, h: 4, red: 1, description: 'Partitions whose ISR is below min.insync.replicas: acks=all produces to them fail.' },
  ),
  stat(
    'Offline partitions',
    { expr: 'sum(kafka_controller_kafkacontroller_offlinepartitionscount)' },
    { w: 4, h: 4, red: 1, description: 'Partitions without a live leader: neither produce nor fetch works on them.' },
  ),
  stat(
    'Offline log directories',
    { expr: 'sum(kafka_log_logmanager_offlinelogdirectorycount)' },
    { w: 4, h: 4, red: 1, description: 'Log directories taken offline after an I/O error.' },
  ),
];

const throughput: Panel[] = [
  timeseries('Messages in', perTopicAndTotal('kafka_server_brokertopicmetrics_messagesin_total'), {
    unit: 'short',
    description: 'Records per second appended for clients, per selected topic and over all topics.',
  }),
  timeseries('Bytes in', perTopicAndTotal('kafka_server_brokertopicmetrics_bytesin_total'), {
    unit: 'Bps',
    description: 'Record bytes per second produced, per selected topic and over all topics.',
  }),
  timeseries('Bytes out', perTopicAndTotal('kafka_server_brokertopicmetrics_bytesout_total'), {
    unit: 'Bps',
    description: "Record bytes per second answered to consumers' fetches, per selected topic and over all topics.",
  }),
  timeseries(
    'Bytes in and out per broker',
    [
      { expr: rate('kafka_server_brokertopicmetrics_bytesin_total', 'instance', 'topic=""'), legend: 'in {{instance}}' },
      { expr: rate('kafka_server_brokertopicmetrics_bytesout_total', 'instance', 'topic=""'), legend: 'out {{instance}}' },
      { expr: rate('kafka_server_brokertopicmetrics_replicationbytesout_total', 'instance'), legend: 'replication out {{instance}}' },
    ],
    { unit: 'Bps', w: 12, description: 'Each broker\'s share of the traffic; "replication out" is what followers fetch from it.' },
  ),
  timeseries(
    'Rejected bytes and failed requests',
    [
      { expr: rate('kafka_server_brokertopicmetrics_bytesrejected_total', 'topic', TOPIC), legend: 'bytes rejected {{topic}}' },
      { expr: rate('kafka_server_brokertopicmetrics_failedproducerequests_total', '', 'topic=""'), legend: 'failed produce' },
      { expr: rate('kafka_server_brokertopicmetrics_failedfetchrequests_total', '', 'topic=""'), legend: 'failed fetch' },
    ],
    { unit: 'short', w: 12, description: 'Produced bytes refused (too large, corrupt) and partition appends/reads that failed unexpectedly, per second.' },
  ),
];

const requests: Panel[] = [
  timeseries('Request rate', [{ expr: rate('kafka_network_requestmetrics_requests_total', 'request', REQUEST), legend: '{{request}}' }], {
    unit: 'reqps',
    description: 'Requests answered per second, per API.',
  }),
  timeseries(
    'Total time p99 (all brokers)',
    [
      {
        expr: `histogram_quantile(0.99, sum by (le, request) (rate(fjord_network_request_total_time_seconds_bucket{${INSTANCE}, ${REQUEST}}${WINDOW})))`,
        legend: '{{request}}',
      },
    ],
    { unit: 's', description: 'The 99th percentile of request time over the selected brokers, from the histograms (fjord_network_request_*).' },
  ),
  timeseries(
    'Total time p99 per broker',
    [
      {
        expr: `max by (instance, request) (kafka_network_requestmetrics_totaltimems{${INSTANCE}, ${REQUEST}, quantile="0.99"})`,
        legend: '{{request}} {{instance}}',
      },
    ],
    { unit: 'ms', description: "Each broker's own 99th percentile over the last minutes (RequestMetrics TotalTimeMs, as the JMX exporter names it)." },
  ),
  timeseries(
    'Time by part (mean)',
    [
      { expr: mean('fjord_network_request_request_queue_time_seconds', '', REQUEST), legend: 'request queue' },
      { expr: mean('fjord_network_request_local_time_seconds', '', REQUEST), legend: 'local' },
      { expr: mean('fjord_network_request_remote_time_seconds', '', REQUEST), legend: 'remote' },
      { expr: mean('fjord_network_request_throttle_time_seconds', '', REQUEST), legend: 'throttle' },
      { expr: mean('fjord_network_request_response_queue_time_seconds', '', REQUEST), legend: 'response queue' },
      { expr: mean('fjord_network_request_response_send_time_seconds', '', REQUEST), legend: 'response send' },
    ],
    {
      unit: 's',
      stack: true,
      description:
        'Where the requests chosen in the Request variable (pick one) spend their time, on average: waiting for the event loop, handling, waiting on replication or long polls, throttled, queued behind earlier answers, sending.',
    },
  ),
  timeseries(
    'Errors by code',
    [{ expr: rate('kafka_network_requestmetrics_errors_total', 'request, error', REQUEST, 'error!="NONE"'), legend: '{{request}} {{error}}' }],
    { unit: 'short', description: 'Error codes per second in responses (each partition counted), per API and Kafka error name.' },
  ),
  timeseries(
    'Connections',
    [{ expr: `sum by (instance, listener) (kafka_server_socket_server_metrics_connection_count{${INSTANCE}})`, legend: '{{listener}} {{instance}}' }],
    { unit: 'short', description: 'Open client connections per broker and listener.' },
  ),
];

const replication: Panel[] = [
  timeseries('Leaders per broker', [{ expr: `sum by (instance) (kafka_server_replicamanager_leadercount{${INSTANCE}})`, legend: '{{instance}}' }], {
    unit: 'short',
    description: 'Partitions each broker leads: uneven counts mean uneven load (see the preferred-replica imbalance).',
  }),
  timeseries('Partitions per broker', [{ expr: `sum by (instance) (kafka_server_replicamanager_partitioncount{${INSTANCE}})`, legend: '{{instance}}' }], {
    unit: 'short',
    description: 'Replicas each broker hosts, leader or follower.',
  }),
  timeseries(
    'Under-replicated and min-ISR partitions per broker',
    [
      { expr: `sum by (instance) (kafka_server_replicamanager_underreplicatedpartitions{${INSTANCE}})`, legend: 'under-replicated {{instance}}' },
      { expr: `sum by (instance) (kafka_server_replicamanager_underminisrpartitioncount{${INSTANCE}})`, legend: 'under min ISR {{instance}}' },
      { expr: `sum by (instance) (kafka_server_replicamanager_atminisrpartitioncount{${INSTANCE}})`, legend: 'at min ISR {{instance}}' },
    ],
    { unit: 'short', description: 'Counted by each partition\'s leader. "At min ISR": one more replica lost and acks=all fails.' },
  ),
  timeseries(
    'ISR shrinks and expands',
    [
      { expr: rate('kafka_server_replicamanager_isrshrinks_total', 'instance'), legend: 'shrinks {{instance}}' },
      { expr: rate('kafka_server_replicamanager_isrexpands_total', 'instance'), legend: 'expands {{instance}}' },
    ],
    { unit: 'short', w: 12, description: "ISR changes per second made by each broker's leaders. Both continually non-zero: followers flapping." },
  ),
  timeseries(
    'Offline and imbalanced',
    [
      { expr: 'sum(kafka_controller_kafkacontroller_offlinepartitionscount)', legend: 'offline partitions' },
      { expr: 'sum(kafka_controller_kafkacontroller_preferredreplicaimbalancecount)', legend: 'not on preferred leader' },
      { expr: `sum(kafka_server_replicamanager_offlinereplicacount{${INSTANCE}})`, legend: 'offline replicas' },
    ],
    { unit: 'short', w: 12, description: 'Partitions without a leader, partitions not led by their preferred replica, replicas on offline log directories.' },
  ),
];

const controller: Panel[] = [
  timeseries(
    'Active controller',
    [
      { expr: `max by (instance) (kafka_controller_kafkacontroller_activecontrollercount{${INSTANCE}})`, legend: '{{instance}}' },
      { expr: 'sum(kafka_controller_kafkacontroller_activecontrollercount)', legend: 'sum (must be 1)' },
    ],
    { unit: 'short', min: 0, description: 'Which broker is the controller (1); the sum over the cluster must stay 1.' },
  ),
  timeseries(
    'Controller event queue',
    [
      { expr: `sum by (instance) (kafka_controller_controllereventmanager_eventqueuesize{${INSTANCE}})`, legend: 'queued {{instance}}' },
      { expr: mean('kafka_controller_controllereventmanager_eventqueuetimems', 'instance'), legend: 'mean wait ms {{instance}}' },
    ],
    { unit: 'short', description: 'Controller events waiting, and the mean time (ms) events waited. Cluster mode only.' },
  ),
  timeseries(
    'Leader elections',
    [
      { expr: rate('kafka_controller_controllerstats_leaderelectionrateandtimems_count', 'instance'), legend: 'broker changes {{instance}}' },
      { expr: mean('kafka_controller_controllerstats_leaderelectionrateandtimems', 'instance'), legend: 'mean ms {{instance}}' },
      {
        expr: `sum by (instance) (increase(kafka_controller_controllerstats_uncleanleaderelections_total{${INSTANCE}}${WINDOW}))`,
        legend: 'unclean {{instance}}',
      },
    ],
    {
      unit: 'short',
      description: 'Broker-change events the controller handled (per second) and their mean time; unclean elections may have lost records. Cluster mode only.',
    },
  ),
  timeseries(
    'ZooKeeper session',
    [
      { expr: `max by (instance) (kafka_server_sessionexpirelistener_sessionstate{${INSTANCE}, state="CONNECTED"})`, legend: 'connected {{instance}}' },
      {
        expr: `sum by (instance) (increase(kafka_server_sessionexpirelistener_zookeeperexpires_total{${INSTANCE}}${WINDOW}))`,
        legend: 'expiries {{instance}}',
      },
      {
        expr: `sum by (instance) (increase(kafka_server_sessionexpirelistener_zookeeperdisconnects_total{${INSTANCE}}${WINDOW}))`,
        legend: 'disconnects {{instance}}',
      },
    ],
    {
      unit: 'short',
      w: 12,
      min: 0,
      description: "1 while the broker's ZooKeeper session is connected; session expiries and lost connections. Cluster mode only.",
    },
  ),
  timeseries(
    'ZooKeeper request latency (mean)',
    [{ expr: mean('kafka_server_zookeeperclientmetrics_zookeeperrequestlatencyms', 'instance'), legend: '{{instance}}' }],
    { unit: 'ms', w: 12, description: "Mean round trip of the broker's ZooKeeper requests. Cluster mode only." },
  ),
];

const lag: Panel[] = [
  timeseries(
    'Lag (records)',
    [{ expr: `sum by (consumergroup, topic) (kafka_consumergroup_lag_sum{${GROUP}, ${TOPIC}})`, legend: '{{consumergroup}} {{topic}}' }],
    {
      unit: 'short',
      description: 'Records each group has yet to read, per topic: high watermark minus committed offset, summed over partitions.',
    },
  ),
  timeseries(
    'Lag (seconds)',
    [{ expr: `max by (consumergroup, topic) (kafka_consumergroup_lag_seconds_max{${GROUP}, ${TOPIC}})`, legend: '{{consumergroup}} {{topic}}' }],
    { unit: 's', description: 'Age of the oldest record each group has yet to read (the record at its committed offset), per topic; 0 when caught up.' },
  ),
  timeseries('Group members', [{ expr: `sum by (consumergroup) (kafka_consumergroup_members{${GROUP}})`, legend: '{{consumergroup}}' }], {
    unit: 'short',
    description: 'Consumers in each group. 0 with a lag above 0: nobody is reading.',
  }),
  table(
    'Most lagging partitions',
    { expr: `topk(20, kafka_consumergroup_lag{${GROUP}, ${TOPIC}} > 0)` },
    { unit: 'short', w: 24, description: 'The 20 group-partitions furthest behind, in records (needs metrics.partition.level.enable=true, the default).' },
  ),
];

const processPanels: Panel[] = [
  timeseries('Event-loop utilisation', [{ expr: `nodejs_eventloop_utilization_ratio{${INSTANCE}}`, legend: '{{instance}}' }], {
    unit: 'percentunit',
    min: 0,
    max: 1,
    description: "Share of the time the broker's one thread spent running callbacks. Near 1: the broker is saturated.",
  }),
  timeseries('Event-loop delay p99', [{ expr: `nodejs_eventloop_lag_p99_seconds{${INSTANCE}}`, legend: '{{instance}}' }], {
    unit: 's',
    description: 'How late a callback ran, 99th percentile since the previous scrape: every client waits this long behind a blocked loop.',
  }),
  timeseries(
    'Memory',
    [
      { expr: `process_resident_memory_bytes{${INSTANCE}}`, legend: 'RSS {{instance}}' },
      { expr: `nodejs_heap_size_used_bytes{${INSTANCE}}`, legend: 'heap used {{instance}}' },
      { expr: `nodejs_external_memory_bytes{${INSTANCE}}`, legend: 'external (buffers) {{instance}}' },
    ],
    { unit: 'bytes' },
  ),
  timeseries('GC time', [{ expr: rate('nodejs_gc_duration_seconds_sum', 'instance, kind'), legend: '{{kind}} {{instance}}' }], {
    unit: 'percentunit',
    description: 'Share of the time spent in garbage-collection pauses, by kind (major pauses block every client).',
  }),
  timeseries('CPU', [{ expr: rate('process_cpu_seconds_total', 'instance'), legend: '{{instance}}' }], {
    unit: 'percentunit',
    description: 'CPU time per second (1 = one core).',
  }),
  timeseries('Open file descriptors', [{ expr: `process_open_fds{${INSTANCE}} / process_max_fds{${INSTANCE}}`, legend: '{{instance}}' }], {
    unit: 'percentunit',
    min: 0,
    description: 'Share of the descriptor limit in use (segments and sockets).',
  }),
];

export function fjordOverview(): Record<string, unknown> {
  return {
    __inputs: [
      {
        name: 'DS_PROMETHEUS',
        label: 'Prometheus',
        description: "The Prometheus that scrapes the brokers' metrics.listener",
        type: 'datasource',
        pluginId: 'prometheus',
        pluginName: 'Prometheus',
      },
    ],
    __elements: {},
    __requires: [
      { type: 'grafana', id: 'grafana', name: 'Grafana', version: '10.0.0' },
      { type: 'datasource', id: 'prometheus', name: 'Prometheus', version: '1.0.0' },
      { type: 'panel', id: 'stat', name: 'Stat', version: '' },
      { type: 'panel', id: 'table', name: 'Table', version: '' },
      { type: 'panel', id: 'timeseries', name: 'Time series', version: '' },
    ],
    annotations: {
      list: [
        {
          builtIn: 1,
          datasource: { type: 'grafana', uid: '-- Grafana --' },
          enable: true,
          hide: true,
          iconColor: 'rgba(0, 211, 255, 1)',
          name: 'Annotations & Alerts',
          type: 'dashboard',
        },
      ],
    },
    description: 'Fjord brokers: throughput, requests, replication, controller, consumer lag, process (docs/operations.md, "Grafana dashboard").',
    editable: true,
    fiscalYearStartMonth: 0,
    graphTooltip: 1,
    id: null,
    links: [],
    liveNow: false,
    panels: layout([
      { title: 'Cluster health', panels: cluster },
      { title: 'Throughput', panels: throughput },
      { title: 'Requests', panels: requests },
      { title: 'Replication and partitions', panels: replication },
      { title: 'Controller and ZooKeeper', panels: controller },
      { title: 'Consumer lag', panels: lag },
      { title: 'Process', panels: processPanels },
    ]),
    refresh: '30s',
    schemaVersion: 38,
    tags: ['fjord', 'kafka'],
    templating: {
      list: [
        {
          name: 'DS_PROMETHEUS',
          label: 'Data source',
          type: 'datasource',
          query: 'prometheus',
          current: {},
          hide: 0,
          includeAll: false,
          multi: false,
          options: [],
          refresh: 1,
          regex: '',
          skipUrlSync: false,
        },
        queryVariable('instance', 'Broker', 'label_values(kafka_server_replicamanager_leadercount, instance)'),
        queryVariable('topic', 'Topic', 'label_values(kafka_server_brokertopicmetrics_messagesin_total{instance=~"$instance"}, topic)'),
        queryVariable('consumergroup', 'Consumer group', 'label_values(kafka_consumergroup_members, consumergroup)'),
        queryVariable('request', 'Request', 'label_values(kafka_network_requestmetrics_requests_total, request)'),
      ],
    },
    time: { from: 'now-1h', to: 'now' },
    timepicker: {},
    timezone: '',
    title: 'Fjord overview',
    uid: 'fjord-overview',
    version: 1,
    weekStart: '',
  };
}

/** The dashboard as committed: two-space JSON and a final newline. */
export function renderFjordOverview(): string {
  return JSON.stringify(fjordOverview(), null, 2) + '\n';
}
