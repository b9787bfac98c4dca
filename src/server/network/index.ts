export { SocketServer } from './socket-server.js';
export {
  type SocketServerOptions,
  DEFAULT_QUEUED_MAX_REQUEST_BYTES,
  DEFAULT_QUEUED_MAX_RESPONSE_BYTES,
  DEFAULT_REQUEST_RECEIVE_TIMEOUT_MS,
} from './socket-server-options.js';
export { isLargeAnswerRequest } from './large-answers.js';
export { RequestMemoryPool, type MemoryWaiter } from './request-memory.js';
export type { CloseReason } from './close-log.js';
export { CloseConnectionError, type ConnectionContext, type RequestDispatcher, type NetworkLogger } from './types.js';
export type { ConnectionStats, ListenerConnectionStats, RequestTimingSink } from './types.js';
export { FrameReader, FrameSizeError, MIN_REQUEST_FRAME_BYTES } from './frame-reader.js';
export {
  parseListeners,
  parseSecurityProtocolMap,
  deriveAdvertisedListeners,
  resolveAdvertisedPorts,
  DEFAULT_SECURITY_PROTOCOL_MAP,
  type ListenerSpec,
} from './listeners.js';
