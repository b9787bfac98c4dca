/**
 * The repository's root, for a test that needs the real tree rather than paths beside its own
 * module: one that reads or spawns TypeScript sources, lists src/, or works on the repository
 * (git, npm pack, the build's stamp).
 * Why not `new URL('../..', import.meta.url)`: `npm test` runs the tests compiled into
 * .test-build/ (scripts/test-build.sh), a copy of the tree made of hard links
 * (scripts/link-test-build.mjs) with the JavaScript beside every .ts: a path to one file (a
 * fixture, bin/, config/, docs/, dist/, a .ts to spawn under tsx) works from there as from the
 * source, but a folder's listing holds the .js too, and git, npm or the build run there would
 * work on the copy.
 */
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The folder tsconfig.test.json compiles into (scripts/link-test-build.mjs names it too). */
export const TEST_BUILD_DIR = '.test-build';

const twoUp = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The repository's root, whether this module runs as test/helpers/repo-root.ts or compiled under .test-build/. */
export const REPO_ROOT = basename(twoUp) === TEST_BUILD_DIR ? dirname(twoUp) : twoUp;
