#!/usr/bin/env node
/**
 * kafka-broker-api-versions.sh: asks every broker of the cluster for its ApiVersions and prints
 * them as Kafka's tool does: `host:port (id: N rack: R) -> (` then one line per API key,
 * `\tName(key): min to max [usable: v]`, where v is the highest version both this tool and the
 * broker know; client APIs the broker does not serve print `UNSUPPORTED`.
 */
import { API_SPECS, Admin, type BrokerNode } from '../client/index.js';
import { createProgram, parseArgs, requireOption, closeAtExit, runTool } from './common/tool.js';
import { clientOptionsFrom, loadPropertiesFile } from './common/config.js';

const TOOL = 'kafka-broker-api-versions.sh';

interface Opts {
  bootstrapServer?: string;
  commandConfig?: string;
}

/** Kafka's Node.toString(). */
export function nodeText(node: BrokerNode): string {
  return `${node.host}:${node.port} (id: ${node.nodeId} rack: ${node.rack ?? 'null'})`;
}

/** One API's line, as NodeApiVersions prints it. */
function apiLine(key: number, range: { min: number; max: number }): string {
  const spec = API_SPECS[key];
  const span = range.min === range.max ? `${range.min}` : `${range.min} to ${range.max}`;
  if (!spec) return `UNKNOWN(${key}): ${span}`;
  const ours = spec.request;
  let usable: string;
  if (ours.maxVersion < range.min) usable = '[unusable: node too new]';
  else if (range.max < ours.minVersion) usable = '[unusable: node too old]';
  else usable = `[usable: ${Math.min(ours.maxVersion, range.max)}]`;
  return `${spec.name}(${key}): ${span} ${usable}`;
}

/** The block Kafka prints after `->`: every advertised API, then client APIs the broker lacks. */
export function apiVersionsText(versions: ReadonlyMap<number, { min: number; max: number }>): string {
  const lines = new Map<number, string>();
  for (const [key, range] of versions) lines.set(key, apiLine(key, range));
  for (const spec of Object.values(API_SPECS)) {
    const clientApi = spec.listeners.includes('zkBroker') || spec.listeners.includes('broker');
    if (clientApi && !lines.has(spec.apiKey)) lines.set(spec.apiKey, `${spec.name}(${spec.apiKey}): UNSUPPORTED`);
  }
  const sorted = [...lines.entries()].sort((a, b) => a[0] - b[0]).map(([, l]) => l);
  return `(\n\t${sorted.join(',\n\t')}\n)`;
}

async function main(argv: string[]): Promise<number> {
  const program = createProgram(TOOL, 'Print the API versions every broker of the cluster supports.')
    .option('--bootstrap-server <server>', 'REQUIRED: the server to connect to')
    .option('--command-config <file>', 'property file with configs for the admin client');
  const raw = parseArgs(program, argv);
  if (raw === null) return 0;
  const o = raw as Opts;
  const props = loadPropertiesFile(o.commandConfig);
  const options = clientOptionsFrom(props, requireOption(o.bootstrapServer, '--bootstrap-server'));
  const admin = closeAtExit(new Admin({ ...options, clientId: options.clientId ?? 'broker-api-versions-tool' }));
  try {
    for (const { node, versions } of await admin.brokerApiVersions()) {
      process.stdout.write(`${nodeText(node)} -> ${apiVersionsText(versions)}\n`);
    }
    return 0;
  } finally {
    await admin.close();
  }
}

runTool(TOOL, main);
