/**
 * What a request handler is: one Kafka API, the versions it serves, and a function from the
 * decoded request to the response. Decoding and encoding are done for it by the router.
 */
import type { Input, MessageCodec, Reader, Writer } from '../../protocol/primitives/index.js';
import type { ConnectionContext } from '../network/types.js';
import type { RequestHeader } from '../request-header.js';
import type { BrokerServices } from '../broker-services.js';

export interface RequestContext {
  header: RequestHeader;
  connection: ConnectionContext;
  services: BrokerServices;
}

export interface ApiHandlerSpec<Req, Res> {
  apiKey: number;
  request: MessageCodec<Req>;
  response: MessageCodec<Res>;
  minVersion: number;
  maxVersion: number;
  /** Returns the response, or null to send none (Produce with acks=0). */
  handle(request: Req, ctx: RequestContext): Promise<Input<Res> | null> | Input<Res> | null;
}

/** A handler with its types erased, as the router's table holds it. */
export interface ApiHandler {
  readonly apiKey: number;
  readonly name: string;
  readonly minVersion: number;
  readonly maxVersion: number;
  readonly requestCodec: MessageCodec<unknown>;
  /** Decodes the body, handles it, and returns a writer of the response body (null: no response). */
  run(r: Reader, ctx: RequestContext): Promise<((w: Writer) => void) | null>;
}

export function defineHandler<Req, Res>(spec: ApiHandlerSpec<Req, Res>): ApiHandler {
  if (spec.minVersion < spec.request.minVersion || spec.maxVersion > spec.request.maxVersion) {
    throw new Error(`${spec.request.name}: versions ${spec.minVersion}-${spec.maxVersion} exceed the spec`);
  }
  return {
    apiKey: spec.apiKey,
    name: spec.request.name.replace(/Request$/, ''),
    minVersion: spec.minVersion,
    maxVersion: spec.maxVersion,
    requestCodec: spec.request as MessageCodec<unknown>,
    async run(r, ctx) {
      const version = ctx.header.apiVersion;
      const req = spec.request.read(r, version);
      const res = await spec.handle(req, ctx);
      if (res === null) return null;
      return (w) => spec.response.write(w, res, version);
    },
  };
}
