/**
 * The embedded broker's delegation tokens: one JSON file beside the metadata file
 * (`fjord-delegation-tokens.json`), replaced atomically on every change, so a restart keeps them.
 */
import { join } from 'node:path';
import { readJsonFile } from './json-file.js';
import { writeFileAtomically } from '../../storage/checkpoint/atomic-file.js';
import { storedTokenFrom, type DelegationTokenStore, type StoredToken } from '../delegation-token-store.js';

export const DELEGATION_TOKENS_FILE = 'fjord-delegation-tokens.json';

interface PersistedTokens {
  version: 1;
  tokens: StoredToken[];
}

export class EmbeddedDelegationTokens implements DelegationTokenStore {
  private readonly file: string;
  private current = new Map<string, StoredToken>();
  private writing: Promise<void> = Promise.resolve();

  constructor(dir: string) {
    this.file = join(dir, DELEGATION_TOKENS_FILE);
  }

  async loadAll(): Promise<StoredToken[]> {
    const read = await readJsonFile(this.file);
    if (read === undefined) return [];
    const parsed = read as PersistedTokens;
    if (parsed.version !== 1 || !Array.isArray(parsed.tokens)) throw new Error(`${this.file}: unknown format`);
    const tokens: StoredToken[] = [];
    for (const t of parsed.tokens) {
      const token = storedTokenFrom(t);
      if (token === undefined) throw new Error(`${this.file}: malformed token ${JSON.stringify(t)}`);
      tokens.push(token);
    }
    this.current = new Map(tokens.map((t) => [t.tokenId, t]));
    return tokens;
  }

  put(token: StoredToken): Promise<void> {
    return this.write((m) => m.set(token.tokenId, { ...token, renewers: [...token.renewers] }));
  }

  remove(tokenId: string): Promise<void> {
    return this.write((m) => m.delete(tokenId));
  }

  async follow(): Promise<void> {
    // One broker, one writer: nothing to follow.
  }

  close(): void {}

  private write(change: (tokens: Map<string, StoredToken>) => void): Promise<void> {
    // Writes are serialised so the file always holds the latest of overlapping changes.
    const next = this.writing.then(async () => {
      const updated = new Map(this.current);
      change(updated);
      const body: PersistedTokens = { version: 1, tokens: [...updated.values()] };
      await writeFileAtomically(this.file, JSON.stringify(body, null, 1));
      this.current = updated;
    });
    this.writing = next.catch(() => undefined);
    return next;
  }
}
