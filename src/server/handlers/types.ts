/**
 * What a request handler is: one Kafka API, the versions it serves, what it needs from the
 * authorizer, and a function from the decoded request to the response. Decoding, the
 * whole-request authorization check, quota timing and encoding are done for it by the router.
 */
import type { Input, MessageCodec, Reader, Writer } from '../../protocol/primitives/index.js';
import type { AclOperation, ResourceType } from '../../security/authorizer/acl-model.js';
import type { ConnectionContext } from '../network/types.js';
import type { RequestHeader } from '../request-header.js';
import type { BrokerServices } from '../broker-services.js';
import { encodeInSlices, worthSlicing } from './sliced-encoding.js';

export interface RequestContext {
  header: RequestHeader;
  connection: ConnectionContext;
  services: BrokerServices;
  /**
   * Quotas: event-loop ms spent decoding the request and running its handler until it first
   * waited; set (only while request quotas exist) once the handler has returned its promise.
   */
  handlerLoopMs?: number;
  /** Request metrics (metrics/request-stats.ts): ms of the handler's own work, of waiting on others, of throttling. */
  localMs?: number;
  remoteMs?: number;
  throttleMs?: number;
  /** Request metrics: performance.now() once the response was ready and throttled; encoding starts then. */
  resumedAt?: number;
}

/** One per-resource check a handler declares: this operation on a resource of this type. */
export interface ResourceCheck {
  readonly resource: ResourceType;
  readonly operation: AclOperation;
}

/**
 * A declared check bound to its resource type and operation (authz.ts resourceChecks): is `name`
 * allowed? (cluster checks: CLUSTER_NAME).
 */
export interface BoundCheck extends ResourceCheck {
  allows(ctx: RequestContext, name: string): boolean;
}

/** A handler's declared per-resource checks, by the name the handler calls them. */
export type ResourceChecks = Readonly<Record<string, BoundCheck>>;

/**
 * A whole-request check: `cluster` (an operation on the cluster) must be allowed, or the request
 * gets `denied` (Kafka's refusal in this API's response shape) without reaching the handler.
 * The router makes the check.
 */
export interface ClusterAuthorization<Req, Res> {
  readonly cluster: AclOperation;
  denied(request: Req, version: number): Input<Res>;
  /** Only some requests of the API need it (AddPartitionsToTxn v4+, sent by brokers); default all. */
  appliesTo?(request: Req, version: number): boolean;
  /** Per-resource checks the handler makes besides (those the check does not apply to). */
  readonly resources?: ResourceChecks;
}

/**
 * What a request needs from the authorizer, declared once per handler (required: a handler
 * without one does not build, and the deny-all test derives its cases from it):
 * - `cluster`: a whole-request check the router makes (ClusterAuthorization);
 * - `resources`: per-resource checks (resource type and operation) the handler makes on the
 *   names in the request with the helpers `resourceChecks` binds, answering per resource;
 * - `ownWay`: the handler checks in a way of its own (filtering a listing quietly, reporting
 *   authorized operations), said why; it may also use declared `resources`;
 * - `none`: the API needs no authorization (said why), and answers under a deny-all authorizer.
 */
export type Authorization<Req, Res> =
  | ClusterAuthorization<Req, Res>
  | { readonly resources: ResourceChecks }
  | { readonly ownWay: string; readonly resources?: ResourceChecks }
  | { readonly none: string };

export interface ApiHandlerSpec<Req, Res> {
  apiKey: number;
  request: MessageCodec<Req>;
  response: MessageCodec<Res>;
  minVersion: number;
  maxVersion: number;
  authorize: Authorization<Req, Res>;
  /**
   * The response's top-level array that can grow with the request (topics, results, ...): when
   * long, it is encoded in slices that let the event loop in (sliced-encoding.ts).
   */
  slicedField?: keyof Res & string;
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
  readonly authorization: Authorization<unknown, object>;
  decode(r: Reader, version: number): unknown;
  /** The response (null: none) to a request decoded by `decode`, its whole-request check passed. */
  handle(request: unknown, ctx: RequestContext): Promise<object | null> | object | null;
  /** A writer of the response body (once a long one's slices are encoded). */
  encoder(response: object, version: number): Promise<(w: Writer) => void> | ((w: Writer) => void);
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
    authorization: spec.authorize as Authorization<unknown, object>,
    decode: (r, version) => spec.request.read(r, version),
    handle: (request, ctx) => spec.handle(request as Req, ctx) as Promise<object | null> | object | null,
    encoder(response, version) {
      const res = response as Input<Res>;
      const field = spec.slicedField;
      if (worthSlicing(res, field)) return encodeInSlices(spec.response, res, field as keyof Res & string, version);
      return (w) => spec.response.write(w, res, version);
    },
  };
}
