export { SocketServer, type SocketServerOptions } from './socket-server.js';
export { CloseConnectionError, type ConnectionContext, type RequestDispatcher, type NetworkLogger } from './types.js';
export { type ConnectionStats } from './connection.js';
export { FrameReader, FrameSizeError, MIN_REQUEST_FRAME_BYTES } from './frame-reader.js';
export {
  parseListeners, parseSecurityProtocolMap, deriveAdvertisedListeners, resolveAdvertisedPorts,
  DEFAULT_SECURITY_PROTOCOL_MAP, type ListenerSpec,
} from './listeners.js';
