/**
 * Reading the embedded broker's small JSON files (ACLs, client entities, delegation tokens): none
 * yet is not an error, and a file that cannot be read or parsed says which file and why.
 */
import { readFile } from 'node:fs/promises';

/** The parsed file, or undefined when it does not exist yet. */
export async function readJsonFile(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${file}: not JSON (${(err as Error).message})`);
  }
}
