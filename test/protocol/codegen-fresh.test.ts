import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { generateAll, specsDir } from '../../tools/codegen/generate.js';
import { SCHEMA_PATH, parseSchema, schemaText } from '../../tools/codegen/schema.js';
import { REPO_ROOT } from '../helpers/repo-root.js';

// Kafka's JSON specs live outside the repository (../shared/kafka-protocol, or
// FJORD_PROTOCOL_SPECS); CI and developer machines have them, a bare clone does not. Without
// them this check cannot run and is reported as skipped; every other protocol test works from
// the committed code and src/protocol/messages/schema.json.
const skip = existsSync(join(specsDir, 'messages'))
  ? false
  : `Kafka's protocol specs are not at ${specsDir} (set FJORD_PROTOCOL_SPECS): cannot compare the committed codec with a fresh generation`;

test('regenerating the codec from the specs gives exactly the committed files', { skip }, () => {
  const root = REPO_ROOT;
  const files = generateAll();
  assert.ok(files.size > 100);
  assert.ok(files.has(SCHEMA_PATH), 'the generator writes the schema the round-trip test reads');
  const stale = [...files].filter(([rel, text]) => !existsSync(join(root, rel)) || readFileSync(join(root, rel), 'utf8') !== text);
  assert.deepEqual(
    stale.map(([rel]) => rel),
    [],
  );
});

test('the committed schema reads back without loss (what the round-trip test builds its values from)', () => {
  // Together with the check above (specs -> schema text), this means the round-trip test's model
  // is the specs' model, less only the fields' descriptions.
  const text = readFileSync(join(REPO_ROOT, SCHEMA_PATH), 'utf8');
  const models = parseSchema(text);
  assert.ok(models.length > 200, `${models.length} messages`);
  assert.equal(schemaText(models), text);
});
