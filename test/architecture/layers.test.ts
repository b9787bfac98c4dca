// The layering of src/ (test/architecture/layer-check.ts holds the order): every import of every
// file under src/ points to its own folder or a lower layer. Also checks that the checker itself
// catches what it is meant to, on made-up files.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { checkLayers, LAYERS, moduleSpecifiers } from './layer-check.js';
import { REPO_ROOT } from '../helpers/repo-root.js';

const SRC = join(REPO_ROOT, 'src', '/');

function sourceFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const entry of readdirSync(SRC, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const path = join(entry.parentPath, entry.name);
    files.set(relative(SRC, path).split(sep).join('/'), readFileSync(path, 'utf8'));
  }
  return files;
}

test('every import under src/ points down the layers (or within its own folder)', () => {
  const files = sourceFiles();
  assert.ok(files.size > 100, `found only ${files.size} files under ${SRC}`);
  const violations = checkLayers(files);
  const listing = violations.map((v) => `  src/${v.file} -> ${v.specifier}: ${v.why}`).join('\n');
  assert.equal(violations.length, 0, `${violations.length} imports break the layer order:\n${listing}`);
});

test('every folder under src/ has a layer', () => {
  const placed = new Set(LAYERS.flat());
  const folders = readdirSync(SRC, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);
  assert.deepEqual(
    folders.filter((f) => !placed.has(f)),
    [],
  );
});

const fake = (entries: Record<string, string>): Map<string, string> => new Map(Object.entries(entries));

test('the checker refuses an upward import, a peer import and a folder without a layer', () => {
  const violations = checkLayers(
    fake({
      'storage/log.ts': "import { Partition } from '../replication/partition.js';\n",
      'coordinator/group/offsets.ts': "import type { ReplicaManager } from '../../replication/replica-manager.js';\n",
      'gadgets/thing.ts': '',
      'server/broker.ts': "import { LogManager } from '../storage/log-manager.js';\nimport { x } from './config/index.js';\n",
    }),
  );
  assert.deepEqual(violations.map((v) => `${v.file} ${v.why}`).sort(), [
    'coordinator/group/offsets.ts coordinator imports replication, a peer',
    'gadgets/thing.ts src/gadgets is in no layer',
    'storage/log.ts storage imports replication, a higher layer',
  ]);
});

test('the checker sees type-only, multi-line, re-exported and dynamic imports', () => {
  const text = [
    'import type {',
    '  BrokerConfig,',
    '  WarnSink,',
    "} from '../server/config/index.js';",
    "export { Broker } from '../server/broker.js';",
    "export * from '../server/handlers/index.js';",
    "const m = await import('../server/main.js');",
    "let t: import('../server/broker-services.js').BrokerServices;",
    "import { readFile } from 'node:fs/promises';",
    "import { Log } from './log.js';",
  ].join('\n');
  assert.deepEqual(moduleSpecifiers('storage/x.ts', text), [
    '../server/config/index.js',
    '../server/broker.js',
    '../server/handlers/index.js',
    '../server/main.js',
    '../server/broker-services.js',
    'node:fs/promises',
    './log.js',
  ]);
  const violations = checkLayers(fake({ 'storage/x.ts': text }));
  assert.equal(violations.length, 5);
  assert.ok(violations.every((v) => v.why === 'storage imports server, a higher layer'));
});

test('the checker refuses an import reaching outside src/ and a computed dynamic import', () => {
  const violations = checkLayers(
    fake({
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the fake file's source holds a template literal
      'common/a.ts': "import x from '../../test/helpers/x.js';\nconst name = 'y';\nawait import(`./${name}.js`);\n",
    }),
  );
  assert.deepEqual(
    violations.map((v) => v.why),
    ['imports from outside src/', 'a computed import cannot be checked'],
  );
});
