/**
 * What docs/operations.md documents against what a live broker serves, for
 * operations-doc.test.ts (one broker) and state-gaps-cluster.test.ts (the cluster-only families).
 *
 * A family is documented by a table row whose first cell names it in backticks (several names per
 * cell allowed; `{a,b}` alternatives expand as in a shell: `nodejs_heap_size_{total,used}_bytes`).
 * Only names starting with a served prefix count. A family is served when the scrape text has its
 * `# TYPE` line (a counter's family name keeps its `_total`).
 */
import { readFileSync } from 'node:fs';

const PREFIXES = ['kafka_', 'fjord_', 'nodejs_', 'process_'];

/** Documented but not served by one embedded broker, each with the reason. */
export const NOT_ON_ONE_BROKER: Readonly<Record<string, string>> = {
  kafka_controller_controllereventmanager_eventqueuesize: 'cluster mode: the ZooKeeper controller',
  kafka_controller_controllereventmanager_eventqueuetimems: 'cluster mode: the ZooKeeper controller',
  kafka_controller_controllerstats_uncleanleaderelections_total: 'cluster mode: the ZooKeeper controller',
  ...Object.fromEntries(
    [
      'controllerchange',
      'leaderelection',
      'topicchange',
      'topicdeletion',
      'isrchange',
      'manualleaderbalance',
      'autoleaderbalance',
      'controlledshutdown',
      'topicuncleanleaderelectionenable',
      'partitionreassignment',
      'listpartitionreassignment',
    ].map((s) => [`kafka_controller_controllerstats_${s}rateandtimems`, 'cluster mode: the ZooKeeper controller']),
  ),
  kafka_server_sessionexpirelistener_sessionstate: 'cluster mode: the ZooKeeper session',
  kafka_server_sessionexpirelistener_zookeeperexpires_total: 'cluster mode: the ZooKeeper session',
  kafka_server_sessionexpirelistener_zookeeperdisconnects_total: 'cluster mode: the ZooKeeper session',
  kafka_server_sessionexpirelistener_zookeepersyncconnects_total: 'cluster mode: the ZooKeeper session',
  kafka_server_zookeeperclientmetrics_zookeeperrequestlatencyms: 'cluster mode: the ZooKeeper session',
};

/** `a_{x,y}_b` -> a_x_b, a_y_b (every group, left to right). */
export function expandBraces(name: string): string[] {
  const m = /\{([^{}]*)\}/.exec(name);
  if (!m) return [name];
  const head = name.slice(0, m.index);
  const tail = name.slice(m.index + m[0].length);
  return m[1]!.split(',').flatMap((alt) => expandBraces(head + alt.trim() + tail));
}

/** Every family docs/operations.md's tables name, with the line that names it. */
export function documentedFamilies(markdown = readFileSync(new URL('../../../docs/operations.md', import.meta.url), 'utf8')): Map<string, number> {
  const out = new Map<string, number>();
  markdown.split('\n').forEach((line, i) => {
    if (!line.startsWith('|')) return;
    const first = line.split('|')[1] ?? '';
    for (const m of first.matchAll(/`([^`]+)`/g)) {
      for (const name of expandBraces(m[1]!)) if (PREFIXES.some((p) => name.startsWith(p))) out.set(name, i + 1);
    }
  });
  return out;
}

/** The families of a scrape: the names of its `# TYPE` lines. */
export function servedFamilies(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text.matchAll(/^# TYPE (\S+) \S+$/gm)) out.add(m[1]!);
  return out;
}
