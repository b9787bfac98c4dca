/**
 * The services a request handler may call. Handlers stay thin: they translate between the wire
 * and these services, which hold the behaviour.
 */
import type { Logger } from 'pino';
import type { BrokerConfig } from './config/index.js';
import type { MetadataStore } from '../metadata/metadata-store.js';
import type { ApiHandler } from './handlers/types.js';

export interface Endpoint {
  host: string;
  port: number;
}

export interface BrokerServices {
  readonly config: BrokerConfig;
  readonly metadata: MetadataStore;
  readonly logger: Logger;
  /** The handler table: the single source for ApiVersions. */
  readonly handlers: ReadonlyMap<number, ApiHandler>;
  /** Where clients reach broker `brokerId` through the listener named `listenerName`. */
  endpointFor(brokerId: number, listenerName: string): Endpoint | undefined;
}
