/**
 * The embedded broker's ACLs: one JSON file beside the metadata file, replaced atomically on
 * every change (writes serialised, so the file holds the latest of overlapping changes).
 */
import { join } from 'node:path';
import { readJsonFile } from './json-file.js';
import { writeFileAtomically } from '../../storage/checkpoint/atomic-file.js';
import type { AclStorage, StoredAclEntry, StoredAclResource, StoredAcls } from '../acl-storage.js';

export const ACLS_FILE = 'fjord-acls.json';

interface PersistedAcls {
  version: 1;
  resources: StoredAcls[];
}

const keyOf = (r: StoredAclResource): string => `${r.resourceType}:${r.patternType}:${r.name}`;

export class EmbeddedAcls implements AclStorage {
  private readonly file: string;
  private current = new Map<string, StoredAcls>();
  private writing: Promise<unknown> = Promise.resolve();

  constructor(dir: string) {
    this.file = join(dir, ACLS_FILE);
  }

  async loadAll(): Promise<StoredAcls[]> {
    const read = await readJsonFile(this.file);
    if (read === undefined) return [];
    const parsed = read as PersistedAcls;
    if (parsed.version !== 1 || !Array.isArray(parsed.resources)) throw new Error(`${this.file}: unknown format`);
    this.current = new Map(parsed.resources.map((r) => [keyOf(r.resource), r]));
    return [...this.current.values()];
  }

  async load(resource: StoredAclResource): Promise<StoredAclEntry[]> {
    return [...(this.current.get(keyOf(resource))?.acls ?? [])];
  }

  update(resource: StoredAclResource, change: (current: readonly StoredAclEntry[]) => StoredAclEntry[] | undefined): Promise<readonly StoredAclEntry[]> {
    const next = this.writing.then(async () => {
      const key = keyOf(resource);
      const before = this.current.get(key)?.acls ?? [];
      const after = change(before);
      if (after === undefined) return before;
      const updated = new Map(this.current);
      if (after.length === 0) updated.delete(key);
      else updated.set(key, { resource: { ...resource }, acls: after });
      const body: PersistedAcls = { version: 1, resources: [...updated.values()] };
      await writeFileAtomically(this.file, JSON.stringify(body, null, 1));
      this.current = updated;
      return after;
    });
    this.writing = next.catch(() => undefined);
    return next;
  }
}
