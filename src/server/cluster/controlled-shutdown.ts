/**
 * Kafka's controlled shutdown (KafkaServer.controlledShutdown): before a cluster-mode broker
 * closes its listeners it asks the controller (ControlledShutdown, key 7) to move leadership of
 * its partitions elsewhere, and waits until the answer lists none it still leads. Retried
 * `controlled.shutdown.max.retries` times, `controlled.shutdown.retry.backoff.ms` apart; when
 * it never succeeds the broker stops anyway (an unclean shutdown: clients see the leaders go).
 */
import type { Logger } from 'pino';
import { Connection } from '../../client/connection.js';
import type { ApiDef } from '../../client/apis.js';
import { UnsupportedApiError } from '../../client/errors.js';
import { ControlledShutdownRequestCodec, ControlledShutdownResponseCodec } from '../../protocol/messages/index.js';
import type { ControlledShutdownRequest, ControlledShutdownResponse } from '../../protocol/messages/07-controlled-shutdown.js';
import { ErrorCode, errorName } from '../../protocol/errors.js';
import type { ClientSecurity } from '../../security/client-security.js';
import { messageOf } from '../../common/errors.js';

const CONTROLLED_SHUTDOWN: ApiDef<ControlledShutdownRequest, ControlledShutdownResponse> = {
  apiKey: 7,
  name: 'ControlledShutdown',
  request: ControlledShutdownRequestCodec,
  response: ControlledShutdownResponseCodec,
  clientMax: ControlledShutdownRequestCodec.maxVersion,
};

export interface ControlledShutdownOptions {
  brokerId: number;
  brokerEpoch: () => bigint;
  /** The controller's id and its inter-broker endpoint, as this broker currently knows them. */
  controller: () => { id: number; host: string; port: number } | undefined;
  maxRetries: number;
  retryBackoffMs: number;
  requestTimeoutMs: number;
  /** TLS (and SASL) of the inter-broker listener, as a client; PLAINTEXT when absent. */
  security?: ClientSecurity;
  logger: Logger;
}

/** True when the controller confirmed this broker leads nothing any more. */
export async function controlledShutdown(o: ControlledShutdownOptions): Promise<boolean> {
  const log = o.logger;
  for (let attempt = 1; attempt <= Math.max(1, o.maxRetries); attempt++) {
    if (attempt > 1) await new Promise((r) => setTimeout(r, o.retryBackoffMs));
    const ctl = o.controller();
    if (!ctl) {
      log.warn({ attempt }, 'controlled shutdown: no controller known; retrying');
      continue;
    }
    let conn: Connection | undefined;
    try {
      conn = await Connection.connect(ctl.host, ctl.port, {
        clientId: `broker-${o.brokerId}-controlled-shutdown`,
        connectTimeoutMs: o.requestTimeoutMs,
        requestTimeoutMs: o.requestTimeoutMs,
        ...(o.security ? { security: o.security } : {}),
      });
      const res = await conn.send(CONTROLLED_SHUTDOWN, { brokerId: o.brokerId, brokerEpoch: o.brokerEpoch() });
      if (res.errorCode === ErrorCode.NONE && res.remainingPartitions.length === 0) {
        log.info({ controllerId: ctl.id, attempt }, 'controlled shutdown succeeded');
        return true;
      }
      log.warn(
        { controllerId: ctl.id, attempt, error: errorName(res.errorCode), remaining: res.remainingPartitions.length },
        'controlled shutdown not complete; retrying',
      );
    } catch (err) {
      if (err instanceof UnsupportedApiError) {
        // A controller that does not serve ControlledShutdown cannot be asked again with more luck.
        log.warn({ controllerId: ctl.id }, 'the controller does not serve ControlledShutdown; stopping without it');
        return false;
      }
      log.warn({ controllerId: ctl.id, attempt, err: messageOf(err) }, 'controlled shutdown request failed; retrying');
    } finally {
      conn?.close();
    }
  }
  log.warn({ retries: o.maxRetries }, 'controlled shutdown failed; proceeding with an unclean shutdown');
  return false;
}
