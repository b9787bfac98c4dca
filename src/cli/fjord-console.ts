#!/usr/bin/env node
/**
 * fjord-console.sh: the web console (docs/console.md) against any Kafka-protocol cluster, as
 * the broker serves it on metrics.listener, from outside the brokers:
 *   fjord-console.sh --bootstrap-server H:P [--command-config F] [--listen 127.0.0.1:8080]
 * It first asks the cluster for its brokers (nothing answering: one line and exit 1, as every
 * tool), then serves until SIGINT or SIGTERM and prints where: `Fjord console at http://H:P/`.
 * The console's clients use --command-config's properties (TLS, SASL), as the tools' admin does.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Admin } from '../client/index.js';
import { ConsoleHttp } from '../console/console-http.js';
import { CliError, closeAtExit, createProgram, parseArgs, requireOption, runTool } from './common/tool.js';
import { clientOptionsFrom, loadPropertiesFile } from './common/config.js';

const TOOL = 'fjord-console.sh';
const DESCRIPTION = 'Serves the Fjord web console for a cluster.';

interface Options {
  bootstrapServer?: string;
  commandConfig?: string;
  listen: string;
}

function listenAddress(s: string): { host: string; port: number } {
  const m = /^\[?([^\]]*?)\]?:(\d{1,5})$/.exec(s.trim());
  if (!m || Number(m[2]) > 65535) throw new CliError(`invalid --listen address "${s}" (expected host:port, e.g. 127.0.0.1:8080)`);
  return { host: m[1]!, port: Number(m[2]) };
}

async function main(argv: string[]): Promise<number> {
  const program = createProgram(TOOL, DESCRIPTION)
    .option('--bootstrap-server <server to connect to>', 'REQUIRED: The Kafka server to connect to.')
    .option('--command-config <command config property file>', "Property file containing configs to be passed to the console's clients.")
    .option('--listen <host:port>', 'Where the console listens (port 0: any free port).', '127.0.0.1:8080');
  if (argv.length === 0) throw new CliError(`${DESCRIPTION} (see --help)`);
  const raw = parseArgs(program, argv);
  if (raw === null) return 0;
  const o = raw as unknown as Options;
  const bootstrap = requireOption(o.bootstrapServer, '--bootstrap-server');
  const address = listenAddress(o.listen);
  const options = clientOptionsFrom(loadPropertiesFile(o.commandConfig), bootstrap);
  const probe = closeAtExit(new Admin(options));
  const cluster = await probe.describeCluster().finally(() => probe.close());

  const console = new ConsoleHttp(() => options);
  const server = http.createServer({ headersTimeout: 10_000, requestTimeout: 60_000 }, (req, res) => {
    let url: URL;
    try {
      url = new URL(req.url ?? '/', 'http://console.invalid');
    } catch {
      res.statusCode = 400;
      res.end('bad request\n');
      return;
    }
    if (ConsoleHttp.owns(url.pathname)) console.handle(req, res, url.pathname, url.searchParams);
    else {
      res.statusCode = 404;
      res.setHeader('Content-Type', 'text/plain; charset=utf-8');
      res.end('not found\n');
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => reject(new CliError(`cannot listen on ${o.listen}: ${err.code ?? err.message}`)));
    server.listen({ host: address.host, port: address.port }, resolve);
  });
  const bound = server.address() as AddressInfo;
  const host = bound.family === 'IPv6' ? `[${bound.address}]` : bound.address;
  process.stdout.write(`Fjord console at http://${host}:${bound.port}/ (cluster ${cluster.clusterId ?? '?'}, ${cluster.brokers.length} brokers)\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  await Promise.all([closed, console.close()]);
  return 0;
}

runTool(TOOL, main);
