/**
 * Client settings from the command line the way Kafka's tools take them: a properties file
 * (--producer.config / --consumer.config / --command-config) overridden by `key=value` flags,
 * then mapped onto the client library's typed options.
 */
import { readFileSync } from 'node:fs';
import { parseProperties } from '../../config/properties.js';
import type { ClientOptions, ConsumerOptions, ProducerOptions, CompressionName } from '../../client/index.js';
import { CliError } from './tool.js';
import { clientTlsSecurityFrom } from './client-tls.js';
import { clientSaslSecurity } from './client-sasl.js';

export function loadPropertiesFile(path: string | undefined): Map<string, string> {
  if (!path) return new Map();
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read config file ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  return parseProperties(text);
}

export function parseKeyValues(list: readonly string[] | undefined, flag: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const item of list ?? []) {
    const i = item.indexOf('=');
    if (i <= 0) throw new CliError(`${flag} expects key=value, got "${item}"`);
    out.set(item.slice(0, i).trim(), item.slice(i + 1));
  }
  return out;
}

export function merged(...maps: Map<string, string>[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of maps) for (const [k, v] of m) out.set(k, v);
  return out;
}

function int(props: Map<string, string>, key: string): number | undefined {
  const v = props.get(key);
  if (v === undefined) return undefined;
  const n = Number(v.trim());
  if (!Number.isFinite(n)) throw new CliError(`${key} must be a number, got "${v}"`);
  return n;
}

function bool(props: Map<string, string>, key: string): boolean | undefined {
  const v = props.get(key)?.trim().toLowerCase();
  if (v === undefined) return undefined;
  if (v !== 'true' && v !== 'false') throw new CliError(`${key} must be true or false, got "${v}"`);
  return v === 'true';
}

/** How long a tool retries when every bootstrap address refuses the connection or does not resolve. */
export const UNREACHABLE_TIMEOUT_MS = 3000;

export function clientOptionsFrom(props: Map<string, string>, bootstrap: string | undefined): ClientOptions {
  const servers = bootstrap ?? props.get('bootstrap.servers');
  if (!servers) throw new CliError('missing required argument --bootstrap-server (see --help)');
  // security.protocol and ssl.* (TLS), then sasl.mechanism and sasl.jaas.config for SASL_*.
  const tls = clientTlsSecurityFrom(props);
  const sasl = clientSaslSecurity(props);
  const security = tls && sasl ? { ...tls, ...sasl } : (tls ?? sasl);
  return {
    ...(security ? { security } : {}),
    bootstrapServers: servers,
    clientId: props.get('client.id'),
    requestTimeoutMs: int(props, 'request.timeout.ms'),
    connectTimeoutMs: int(props, 'socket.connection.setup.timeout.max.ms') ?? int(props, 'socket.connection.setup.timeout.ms') ?? 10000,
    retryBackoffMs: int(props, 'retry.backoff.ms'),
    metadataMaxAgeMs: int(props, 'metadata.max.age.ms'),
    enableMetricsPush: bool(props, 'enable.metrics.push'),
    // Kafka's tools retry an address that refuses for default.api.timeout.ms (60 s); when nothing
    // at all answers, Fjord's say so after a few seconds unless the property asks for longer.
    unreachable: { timeoutMs: int(props, 'default.api.timeout.ms') ?? UNREACHABLE_TIMEOUT_MS, setting: 'default.api.timeout.ms' },
  };
}

export function producerOptionsFrom(props: Map<string, string>, bootstrap: string | undefined): ProducerOptions {
  const acks = props.get('acks')?.trim();
  let ackValue: ProducerOptions['acks'];
  if (acks !== undefined) {
    if (acks === 'all' || acks === '-1') ackValue = -1;
    else if (acks === '0' || acks === '1') ackValue = Number(acks) as 0 | 1;
    else throw new CliError(`acks must be all, -1, 0 or 1, got "${acks}"`);
  }
  const compression = props.get('compression.type')?.trim().toLowerCase();
  if (compression !== undefined && !['none', 'gzip', 'snappy', 'lz4', 'zstd'].includes(compression)) {
    throw new CliError(`unknown compression type "${compression}" (none, gzip, snappy, lz4, zstd)`);
  }
  const idempotence = bool(props, 'enable.idempotence');
  return {
    ...clientOptionsFrom(props, bootstrap),
    // The producer's own setting for how long a send waits for metadata (Kafka's max.block.ms).
    unreachable: { timeoutMs: int(props, 'max.block.ms') ?? UNREACHABLE_TIMEOUT_MS, setting: 'max.block.ms' },
    acks: ackValue,
    lingerMs: int(props, 'linger.ms'),
    batchSize: int(props, 'batch.size'),
    compression: compression as CompressionName | undefined,
    retries: int(props, 'retries'),
    deliveryTimeoutMs: int(props, 'delivery.timeout.ms'),
    enableIdempotence: idempotence ?? (ackValue === undefined || ackValue === -1 ? undefined : false),
  };
}

export function consumerOptionsFrom(props: Map<string, string>, bootstrap: string | undefined): ConsumerOptions {
  const reset = props.get('auto.offset.reset')?.trim();
  if (reset !== undefined && !['earliest', 'latest', 'none'].includes(reset)) {
    throw new CliError(`auto.offset.reset must be earliest, latest or none, got "${reset}"`);
  }
  const isolation = props.get('isolation.level')?.trim();
  if (isolation !== undefined && isolation !== 'read_committed' && isolation !== 'read_uncommitted') {
    throw new CliError(`isolation.level must be read_committed or read_uncommitted, got "${isolation}"`);
  }
  const groupProtocol = props.get('group.protocol')?.trim().toLowerCase();
  if (groupProtocol !== undefined && groupProtocol !== 'classic' && groupProtocol !== 'consumer') {
    throw new CliError(`group.protocol must be classic or consumer, got "${groupProtocol}"`);
  }
  return {
    ...clientOptionsFrom(props, bootstrap),
    groupId: props.get('group.id'),
    groupInstanceId: props.get('group.instance.id'),
    groupProtocol,
    groupRemoteAssignor: props.get('group.remote.assignor')?.trim(),
    clientRack: props.get('client.rack')?.trim(),
    autoOffsetReset: reset as ConsumerOptions['autoOffsetReset'],
    enableAutoCommit: bool(props, 'enable.auto.commit'),
    autoCommitIntervalMs: int(props, 'auto.commit.interval.ms'),
    sessionTimeoutMs: int(props, 'session.timeout.ms'),
    heartbeatIntervalMs: int(props, 'heartbeat.interval.ms'),
    maxPollIntervalMs: int(props, 'max.poll.interval.ms'),
    partitionAssignmentStrategy: props
      .get('partition.assignment.strategy')
      ?.split(',')
      .map((s) => s.trim())
      .filter((s) => s !== ''),
    fetchMinBytes: int(props, 'fetch.min.bytes'),
    fetchMaxBytes: int(props, 'fetch.max.bytes'),
    fetchMaxWaitMs: int(props, 'fetch.max.wait.ms'),
    maxPartitionFetchBytes: int(props, 'max.partition.fetch.bytes'),
    maxPollRecords: int(props, 'max.poll.records'),
    isolationLevel: isolation as ConsumerOptions['isolationLevel'],
    excludeInternalTopics: bool(props, 'exclude.internal.topics'),
  };
}
