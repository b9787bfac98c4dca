/**
 * The embedded broker's client entities (SCRAM credentials, quotas): one JSON file beside the
 * metadata file, replaced atomically on every change.
 */
import { join } from 'node:path';
import { readJsonFile } from './json-file.js';
import { writeFileAtomically } from '../../storage/checkpoint/atomic-file.js';
import type { ClientEntityBackend } from '../client-entity-configs.js';

export const CLIENT_ENTITIES_FILE = 'fjord-client-entities.json';

interface PersistedEntities {
  version: 1;
  entities: Record<string, Record<string, string>>;
}

export class EmbeddedClientEntities implements ClientEntityBackend {
  private readonly file: string;
  private current = new Map<string, Record<string, string>>();
  private writing: Promise<void> = Promise.resolve();

  constructor(dir: string) {
    this.file = join(dir, CLIENT_ENTITIES_FILE);
  }

  async loadAll(): Promise<Map<string, Record<string, string>>> {
    const read = await readJsonFile(this.file);
    if (read === undefined) return new Map();
    const parsed = read as PersistedEntities;
    if (parsed.version !== 1 || typeof parsed.entities !== 'object') throw new Error(`${this.file}: unknown format`);
    this.current = new Map(Object.entries(parsed.entities));
    return new Map([...this.current].map(([k, v]) => [k, { ...v }]));
  }

  async load(path: string): Promise<Record<string, string>> {
    return { ...(this.current.get(path) ?? {}) };
  }

  store(path: string, configs: Record<string, string>): Promise<void> {
    // Writes are serialised so the file always holds the latest of overlapping changes.
    const next = this.writing.then(async () => {
      const updated = new Map(this.current);
      if (Object.keys(configs).length === 0) updated.delete(path);
      else updated.set(path, { ...configs });
      const body: PersistedEntities = { version: 1, entities: Object.fromEntries(updated) };
      await writeFileAtomically(this.file, JSON.stringify(body, null, 1));
      this.current = updated;
    });
    this.writing = next.catch(() => undefined);
    return next;
  }
}
