/**
 * The repository's root, for a test that needs the real tree rather than paths beside its own
 * module: one that reads or spawns TypeScript sources, lists src/, or works on the repository
 * (git, npm pack, the build's stamp).
 * Why not `new URL('../..', import.meta.url)`: `npm test` runs the tests compiled into
 * .test-build/ (scripts/test.sh), where the TypeScript sources are not (their .js stand there),
 * while fixtures, bin/, config/, docs/ and dist/ are linked in (scripts/link-test-build.mjs), so
 * a path to one of those works either way.
 */
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder tsconfig.test.json compiles into (scripts/link-test-build.mjs names it too). */
export const TEST_BUILD_DIR = '.test-build';

const twoUp = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The repository's root, whether this module runs as test/helpers/repo-root.ts or compiled under .test-build/. */
export const REPO_ROOT = basename(twoUp) === TEST_BUILD_DIR ? dirname(twoUp) : twoUp;
