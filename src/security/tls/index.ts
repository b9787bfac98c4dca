export { buildListenerTls, listenerSettings, type ListenerTls, type SslClientAuth, type SslSettings, type TlsMaterial } from './server-tls.js';
export { SslPrincipalMapper, SslPrincipalMappingError } from './principal-mapper.js';
export { subjectRfc2253 } from './x500.js';
export { tlsPrincipal } from './tls-principal.js';
