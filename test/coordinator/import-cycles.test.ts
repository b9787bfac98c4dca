/**
 * The coordinator's files import one another without cycles (type-only imports count too): the
 * group coordinator's expiry, group-shard, offsets and rebalance once formed a loop; the shard
 * state and the group's outcomes now sit below the operations, and GroupShard composes them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/repo-root.js';

const ROOT = path.join(REPO_ROOT, 'src', 'coordinator');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sourceFiles(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

/** Relative imports and re-exports of a file, `import type` included, as absolute .ts paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/^\s*(?:import|export)\b[^'";]*?\bfrom\s+'(\.[^']+)'/gm)) {
    out.push(path.resolve(path.dirname(file), m[1]!.replace(/\.js$/, '.ts')));
  }
  return out;
}

/** Each cycle of the graph once, as the files along it (depth-first search over the edges). */
function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const cycles: string[][] = [];
  const done = new Set<string>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const visit = (node: string): void => {
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (onStack.has(next)) cycles.push(stack.slice(stack.indexOf(next)));
      else if (!done.has(next) && graph.has(next)) visit(next);
    }
    stack.pop();
    onStack.delete(node);
    done.add(node);
  };
  for (const node of graph.keys()) if (!done.has(node)) visit(node);
  return cycles;
}

test('the cycle finder finds a loop of three files and none in a chain', () => {
  const loop = new Map([
    ['a', ['b']],
    ['b', ['c']],
    ['c', ['a']],
  ]);
  assert.deepEqual(cyclesOf(loop), [['a', 'b', 'c']]);
  assert.deepEqual(
    cyclesOf(
      new Map([
        ['a', ['b']],
        ['b', ['c']],
        ['c', []],
      ]),
    ),
    [],
  );
});

test('the import reader sees type-only imports and re-exports', () => {
  const files = sourceFiles(ROOT);
  const expiry = files.find((f) => f.endsWith(path.join('group', 'expiry.ts')))!;
  assert.ok(
    importsOf(expiry).some((f) => f.endsWith(path.join('group', 'group-shard-state.ts'))),
    'expiry.ts imports the shard state (type-only)',
  );
});

test('no file of src/coordinator imports itself back through others', () => {
  const graph = new Map(sourceFiles(ROOT).map((f) => [f, importsOf(f)]));
  assert.ok(graph.size > 20, `read ${graph.size} files`);
  const cycles = cyclesOf(graph).map((c) => c.map((f) => path.relative(ROOT, f)).join(' -> '));
  assert.deepEqual(cycles, []);
});
