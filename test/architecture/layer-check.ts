// The layer check: which folder under src/ may import which. LAYERS is the one place the order is
// written (docs/architecture.md states the same order); checkLayers() is pure over a set of files,
// so its own test can feed it fake ones.
import ts from 'typescript';
import { posix } from 'node:path';

/** Bottom to top. A folder may import its own files and folders of lower rows only; folders in
 *  the same row are peers and import none of each other. */
export const LAYERS: readonly (readonly string[])[] = [
  ['common'],
  // protocol/ below config/: topic and dynamic broker config checks answer with Kafka's error
  // codes (KafkaError(INVALID_CONFIG)), and protocol/ needs no config.
  ['protocol'],
  ['config'],
  ['storage'],
  ['metadata'],
  ['security'],
  ['client'],
  // console/: the web console's server side (its API over client/'s Admin, Producer and Fetcher);
  // a client of a cluster like the tools, so no peer's internals either.
  ['controller', 'replication', 'coordinator', 'console'],
  // The tools are clients of a broker, never part of one: cli/ and server/ import none of each other.
  ['server', 'cli'],
];

export interface LayerViolation {
  /** The importing file, relative to src/ ("storage/log.ts"). */
  readonly file: string;
  /** The module specifier as written. */
  readonly specifier: string;
  readonly why: string;
}

/** Every module specifier a file names: import/export-from (type-only or not, over any number of
 *  lines), `import x = require()`, dynamic `import()` and `import("...").T` type references. */
export function moduleSpecifiers(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier !== undefined) {
      if (ts.isStringLiteral(node.moduleSpecifier)) found.push(node.moduleSpecifier.text);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const expr = node.moduleReference.expression;
      if (ts.isStringLiteral(expr)) found.push(expr.text);
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const arg = node.arguments[0];
      // A computed dynamic import cannot be checked statically: report it as its text.
      if (arg !== undefined) found.push(ts.isStringLiteralLike(arg) ? arg.text : `<computed ${arg.getText(source)}>`);
    } else if (ts.isImportTypeNode(node)) {
      const arg = node.argument;
      if (ts.isLiteralTypeNode(arg) && ts.isStringLiteral(arg.literal)) found.push(arg.literal.text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The folder a path under src/ belongs to: its first segment ("storage/log.ts" -> "storage"),
 *  or "" for a file directly in src/. */
function topFolder(srcRelative: string): string {
  const slash = srcRelative.indexOf('/');
  return slash < 0 ? '' : srcRelative.slice(0, slash);
}

/** Checks files given as src/-relative path -> source text. */
export function checkLayers(files: ReadonlyMap<string, string>, layers = LAYERS): LayerViolation[] {
  const rank = new Map<string, number>();
  layers.forEach((row, i) => row.forEach((folder) => rank.set(folder, i)));
  const violations: LayerViolation[] = [];
  for (const [file, text] of files) {
    const from = topFolder(file);
    const fromRank = rank.get(from);
    if (fromRank === undefined) {
      violations.push({ file, specifier: '', why: `src/${from || file} is in no layer` });
      continue;
    }
    for (const specifier of moduleSpecifiers(file, text)) {
      if (specifier.startsWith('<computed')) {
        violations.push({ file, specifier, why: 'a computed import cannot be checked' });
        continue;
      }
      if (!specifier.startsWith('.')) continue; // node: builtins and packages
      const target = posix.normalize(posix.join(posix.dirname(file), specifier));
      if (target.startsWith('../') || target === '..') {
        violations.push({ file, specifier, why: 'imports from outside src/' });
        continue;
      }
      const to = topFolder(target);
      if (to === from) continue;
      const toRank = rank.get(to);
      if (toRank === undefined) violations.push({ file, specifier, why: `src/${to || target} is in no layer` });
      else if (toRank > fromRank) violations.push({ file, specifier, why: `${from} imports ${to}, a higher layer` });
      else if (toRank === fromRank) violations.push({ file, specifier, why: `${from} imports ${to}, a peer` });
    }
  }
  return violations;
}
