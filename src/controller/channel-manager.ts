/**
 * Sends the controller's requests to brokers (Kafka's ControllerChannelManager): one queue per
 * broker, processed in order, over a `Connection` to the broker's inter-broker listener. A failed
 * send closes the connection and retries the same request after a backoff, until it is answered
 * or the broker is removed (it died or restarted; a restarted broker gets fresh requests carrying
 * its new brokerEpoch). Versions come from ApiVersions: the highest the broker serves, up to
 * LeaderAndIsr v6, UpdateMetadata v7, StopReplica v3 (topic ids, brokerEpoch, per-partition
 * delete flags and leader epochs; the later versions only add KRaft fields).
 */
import type { Logger } from 'pino';
import { Connection } from '../client/connection.js';
import type { ApiDef } from '../client/apis.js';
import * as m from '../protocol/messages/index.js';
import type { ControllerRequest, ControllerRequestSink } from './request-batch.js';
import type { LiveBroker } from './context.js';
import type { InterBrokerInterceptor } from '../client/inter-broker-interceptor.js';
import type { ClientSecurity } from '../security/client-security.js';
import { messageOf } from '../common/errors.js';

export const LEADER_AND_ISR: ApiDef<m.LeaderAndIsrRequest, m.LeaderAndIsrResponse> = {
  apiKey: 4,
  name: 'LeaderAndIsr',
  request: m.LeaderAndIsrRequestCodec,
  response: m.LeaderAndIsrResponseCodec,
  clientMax: 6,
};
export const STOP_REPLICA: ApiDef<m.StopReplicaRequest, m.StopReplicaResponse> = {
  apiKey: 5,
  name: 'StopReplica',
  request: m.StopReplicaRequestCodec,
  response: m.StopReplicaResponseCodec,
  clientMax: 3,
};
export const UPDATE_METADATA: ApiDef<m.UpdateMetadataRequest, m.UpdateMetadataResponse> = {
  apiKey: 6,
  name: 'UpdateMetadata',
  request: m.UpdateMetadataRequestCodec,
  response: m.UpdateMetadataResponseCodec,
  clientMax: 7,
};

export interface ChannelManagerOptions {
  controllerId: number;
  interBrokerListenerName: string;
  requestTimeoutMs: number;
  /** TLS (and SASL) of the inter-broker listener, as a client; PLAINTEXT when absent. */
  security?: ClientSecurity;
  /** Backoff before retrying a failed send (Kafka retries the same request until the broker goes). */
  retryBackoffMs?: number;
  logger: Logger;
  /** The broker's registration, looked up when (re)connecting. */
  brokerInfo(brokerId: number): LiveBroker | undefined;
  /** Test seam: consulted before each request is sent (none: nothing is called). */
  interceptor?: InterBrokerInterceptor;
}

const API_KEYS = { LeaderAndIsr: 4, StopReplica: 5, UpdateMetadata: 6 } as const;

class BrokerQueue {
  private readonly queue: ControllerRequest[] = [];
  private conn: Connection | undefined;
  private running = false;
  removed = false;
  private wake: (() => void) | undefined;

  constructor(
    private readonly brokerId: number,
    private readonly opts: ChannelManagerOptions,
  ) {}

  push(r: ControllerRequest): void {
    this.queue.push(r);
    if (!this.running) void this.run();
  }

  remove(): void {
    this.removed = true;
    this.queue.length = 0;
    this.conn?.close();
    this.wake?.();
  }

  private async connection(): Promise<Connection> {
    if (this.conn && !this.conn.isClosed) return this.conn;
    const b = this.opts.brokerInfo(this.brokerId);
    const ep = b?.endpoints.find((e) => e.listenerName === this.opts.interBrokerListenerName);
    if (!ep) throw new Error(`broker ${this.brokerId} has no ${this.opts.interBrokerListenerName} endpoint`);
    this.conn = await Connection.connect(ep.host, ep.port, {
      clientId: `controller-${this.opts.controllerId}`,
      connectTimeoutMs: this.opts.requestTimeoutMs,
      requestTimeoutMs: this.opts.requestTimeoutMs,
      ...(this.opts.security ? { security: this.opts.security } : {}),
    });
    return this.conn;
  }

  private async sendOne(r: ControllerRequest): Promise<void> {
    const c = await this.connection();
    const interceptor = this.opts.interceptor;
    if (interceptor) await interceptor.beforeSend({ from: this.opts.controllerId, to: this.brokerId, apiKey: API_KEYS[r.api] });
    switch (r.api) {
      case 'LeaderAndIsr': {
        const res = await c.send(LEADER_AND_ISR, r.request);
        if (res.errorCode !== 0) this.opts.logger.warn({ brokerId: this.brokerId, errorCode: res.errorCode }, 'LeaderAndIsr refused');
        return;
      }
      case 'UpdateMetadata': {
        const res = await c.send(UPDATE_METADATA, r.request);
        if (res.errorCode !== 0) this.opts.logger.warn({ brokerId: this.brokerId, errorCode: res.errorCode }, 'UpdateMetadata refused');
        return;
      }
      case 'StopReplica': {
        const res = await c.send(STOP_REPLICA, r.request);
        r.onResponse?.(res);
        return;
      }
    }
  }

  private async run(): Promise<void> {
    this.running = true;
    let failures = 0;
    try {
      while (!this.removed && this.queue.length > 0) {
        const r = this.queue[0]!;
        try {
          await this.sendOne(r);
          this.queue.shift();
          failures = 0;
        } catch (err) {
          if (this.removed) return;
          this.conn?.close();
          this.conn = undefined;
          if (failures++ === 0) this.opts.logger.warn({ brokerId: this.brokerId, api: r.api, err: messageOf(err) }, 'controller request failed; retrying');
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, this.opts.retryBackoffMs ?? 1000);
            this.wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          this.wake = undefined;
        }
      }
    } finally {
      this.running = false;
    }
  }
}

export class ControllerChannelManager implements ControllerRequestSink {
  private readonly queues = new Map<number, BrokerQueue>();

  constructor(private readonly opts: ChannelManagerOptions) {}

  send(brokerId: number, request: ControllerRequest): void {
    let q = this.queues.get(brokerId);
    if (!q) this.queues.set(brokerId, (q = new BrokerQueue(brokerId, this.opts)));
    q.push(request);
  }

  removeBroker(brokerId: number): void {
    this.queues.get(brokerId)?.remove();
    this.queues.delete(brokerId);
  }

  shutdown(): void {
    for (const id of [...this.queues.keys()]) this.removeBroker(id);
  }
}
