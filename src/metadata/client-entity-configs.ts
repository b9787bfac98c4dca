/**
 * Configs of Kafka's client entities: users, client ids, and users' client ids, each with a
 * `<default>`. SCRAM credentials and client quotas live here, where Kafka keeps them:
 * `/config/users/<user>`, `/config/clients/<client-id>`, `/config/users/<user>/clients/<client-id>`
 * in ZooKeeper, or one JSON file for the embedded broker. Every broker keeps the whole set in
 * memory (it is small) and re-reads an entity when a change is announced.
 *
 * An entity is named by its *path* as it appears under /config, with names sanitized as Kafka's
 * Sanitizer does (URL-encoding), e.g. `users/CN%3Dbob`, `users/<default>/clients/app`.
 */

export const DEFAULT_ENTITY_NAME = '<default>';

/** One entity, unsanitized. `null` = the `<default>` entity of that type; `undefined` = not part of it. */
export interface ClientEntity {
  user?: string | null;
  clientId?: string | null;
}

/** Kafka's Sanitizer.sanitize: URL-encode (UTF-8), with '*' encoded and spaces as %20. */
export function sanitizeEntityName(name: string): string {
  return encodeURIComponent(name).replace(/[!'()*~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

export function desanitizeEntityName(name: string): string {
  return decodeURIComponent(name);
}

const part = (name: string | null): string => (name === null ? DEFAULT_ENTITY_NAME : sanitizeEntityName(name));
const unpart = (name: string): string | null => (name === DEFAULT_ENTITY_NAME ? null : desanitizeEntityName(name));

export function entityPath(e: ClientEntity): string {
  if (e.user !== undefined && e.clientId !== undefined) return `users/${part(e.user)}/clients/${part(e.clientId)}`;
  if (e.user !== undefined) return `users/${part(e.user)}`;
  if (e.clientId !== undefined) return `clients/${part(e.clientId)}`;
  throw new Error('a client entity names a user, a client id, or both');
}

/** undefined when `path` is not a client entity path. */
export function parseEntityPath(path: string): ClientEntity | undefined {
  const s = path.split('/');
  if (s.length === 2 && s[0] === 'users' && s[1] !== '') return { user: unpart(s[1]!) };
  if (s.length === 2 && s[0] === 'clients' && s[1] !== '') return { clientId: unpart(s[1]!) };
  if (s.length === 4 && s[0] === 'users' && s[2] === 'clients' && s[1] !== '' && s[3] !== '') {
    return { user: unpart(s[1]!), clientId: unpart(s[3]!) };
  }
  return undefined;
}

export interface ClientEntityConfigStore {
  /** The entity's configs; `{}` when it has none. */
  get(path: string): Readonly<Record<string, string>>;
  /** Every entity that has configs. */
  entries(): ReadonlyMap<string, Readonly<Record<string, string>>>;
  /**
   * Replaces the entity's configs (an empty object removes the entity). Resolves once durable,
   * and announced to every broker in cluster mode; this broker's view is updated before resolving.
   */
  set(path: string, configs: Record<string, string>): Promise<void>;
  /** Called with an entity path after its configs changed here or anywhere in the cluster. */
  onChange(listener: (path: string) => void): void;
}

/** Where a ClientEntityConfigs keeps its entities. */
export interface ClientEntityBackend {
  loadAll(): Promise<Map<string, Record<string, string>>>;
  load(path: string): Promise<Record<string, string>>;
  store(path: string, configs: Record<string, string>): Promise<void>;
}

/** The in-memory view over a backend, shared by both modes. */
export class ClientEntityConfigs implements ClientEntityConfigStore {
  private readonly listeners: ((path: string) => void)[] = [];

  private constructor(
    private readonly backend: ClientEntityBackend,
    private readonly byPath: Map<string, Record<string, string>>,
  ) {}

  static async open(backend: ClientEntityBackend): Promise<ClientEntityConfigs> {
    return new ClientEntityConfigs(backend, await backend.loadAll());
  }

  get(path: string): Readonly<Record<string, string>> {
    return this.byPath.get(path) ?? {};
  }

  entries(): ReadonlyMap<string, Readonly<Record<string, string>>> {
    return this.byPath;
  }

  async set(path: string, configs: Record<string, string>): Promise<void> {
    if (parseEntityPath(path) === undefined) throw new Error(`not a client entity: ${path}`);
    await this.backend.store(path, configs);
    this.apply(path, configs);
  }

  /** Re-reads one entity after a change announced by another broker or tool. */
  async reload(path: string): Promise<void> {
    this.apply(path, await this.backend.load(path));
  }

  onChange(listener: (path: string) => void): void {
    this.listeners.push(listener);
  }

  private apply(path: string, configs: Record<string, string>): void {
    if (Object.keys(configs).length === 0) this.byPath.delete(path);
    else this.byPath.set(path, { ...configs });
    for (const l of this.listeners) l(path);
  }
}
