// A second node:test reporter beside TAP: it prints nothing while tests pass and, once the run
// ends, one block naming every failed test (file, name, the first lines of its error). CI keeps
// only the tail of a long log, and TAP puts a failure wherever it happened; this puts it last.
const MAX_ERROR_LINES = 12;

function errorText(error) {
  if (error === undefined || error === null) return '(no error object)';
  const cause = error.cause ?? error;
  const text = typeof cause === 'object' && 'stack' in cause ? String(cause.stack) : String(cause);
  return text.split('\n').slice(0, MAX_ERROR_LINES).join('\n');
}

/** A compiled test's file (scripts/test-build.sh: .test-build/x.test.js) named as its source, test/x.test.ts. */
function sourceFile(file) {
  return file.replace(/(^|\/)\.test-build\/(.*)\.js$/, '$1$2.ts');
}

export default async function* failureSummary(source) {
  const failures = [];
  for await (const event of source) {
    if (event.type !== 'test:fail') continue;
    const { name, file, details, nesting } = event.data;
    // A failing subtest also fails its parent; the innermost one carries the useful error.
    if (details?.error?.failureType === 'subtestsFailed') continue;
    failures.push({ name, file: file ? sourceFile(file) : '(unknown file)', nesting, error: errorText(details?.error) });
  }
  if (failures.length === 0) return;
  yield `\n# ${failures.length} failed test(s):\n`;
  for (const failure of failures) {
    yield `#  - ${failure.file}\n#    ${failure.name}\n`;
    for (const line of failure.error.split('\n')) yield `#      ${line}\n`;
  }
}
