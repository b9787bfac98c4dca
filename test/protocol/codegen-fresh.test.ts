import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { generateAll, specsDir } from '../../tools/codegen/generate.js';

test('regenerating the codec from the specs gives exactly the committed files', () => {
  assert.ok(existsSync(specsDir), `protocol specs missing at ${specsDir}`);
  const root = resolve(import.meta.dirname, '../..');
  const files = generateAll();
  assert.ok(files.size > 100);
  const stale = [...files].filter(([rel, text]) => !existsSync(join(root, rel)) || readFileSync(join(root, rel), 'utf8') !== text);
  assert.deepEqual(stale.map(([rel]) => rel), []);
});
