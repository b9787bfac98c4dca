/**
 * Finding a group's coordinator and talking to it: FindCoordinator (both the single-key form
 * of v0-3 and the batched form of v4+), retried while the coordinator is loading or moving.
 */
import { Api, type ApiDef } from '../apis.js';
import { sleep, type Cluster } from '../cluster.js';
import type { Connection } from '../connection.js';
import { KafkaError, isRetriableError } from '../errors.js';
import { ErrorCode } from '../../protocol/errors.js';
import type { Input } from '../../protocol/primitives/index.js';

export async function findCoordinator(cluster: Cluster, groupId: string, keyType = 0): Promise<Connection> {
  const deadline = Date.now() + cluster.requestTimeoutMs;
  for (;;) {
    try {
      const conn = await cluster.anyConnection();
      const resp = await conn.send(Api.FindCoordinator, { key: groupId, keyType, coordinatorKeys: [groupId] });
      const c = resp.coordinators.length > 0 ? resp.coordinators[0]! : { ...resp, key: groupId };
      if (c.errorCode !== 0) throw new KafkaError(c.errorCode, `cannot find the coordinator of group ${groupId}: ${c.errorMessage ?? ''}`);
      return await cluster.connectionTo(c.host, c.port);
    } catch (err) {
      if (!isRetriableError(err) || Date.now() + cluster.retryBackoffMs > deadline) throw err;
      await sleep(cluster.retryBackoffMs);
    }
  }
}

const COORDINATOR_MOVED: ReadonlySet<number> = new Set([
  ErrorCode.NOT_COORDINATOR,
  ErrorCode.COORDINATOR_NOT_AVAILABLE,
  ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
]);

/**
 * Sends a group request to the coordinator; when `errorOf(resp)` says the coordinator moved or
 * is loading, or the connection failed, finds it again and retries until the request timeout.
 */
export async function sendToCoordinator<Req, Resp>(
  cluster: Cluster,
  groupId: string,
  api: ApiDef<Req, Resp>,
  request: Input<Req>,
  errorOf: (resp: Resp) => number,
  timeoutMs?: number,
): Promise<Resp> {
  const deadline = Date.now() + (timeoutMs ?? cluster.requestTimeoutMs);
  for (;;) {
    let retry: unknown;
    try {
      const conn = await findCoordinator(cluster, groupId);
      const resp = await conn.send(api, request, timeoutMs ? { timeoutMs } : undefined);
      const code = errorOf(resp);
      if (!COORDINATOR_MOVED.has(code)) return resp;
      retry = new KafkaError(code);
    } catch (err) {
      if (!isRetriableError(err)) throw err;
      retry = err;
    }
    if (Date.now() + cluster.retryBackoffMs > deadline) throw retry;
    await sleep(cluster.retryBackoffMs);
  }
}
