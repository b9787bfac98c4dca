/**
 * Which build the tests' child processes run: dist/ when it was built from exactly today's
 * sources (its stamp, scripts/build-fingerprint.mjs: `npm test` builds first, so always there),
 * else src/ through tsx, so that a file run alone after an edit tests the edit.
 * Why it matters: under tsx's loader each module import costs a hop to the loader's thread; a
 * broker or a tool started from src/ spends about a second more CPU than from dist/, and the
 * suite starts hundreds. FJORD_TEST_FROM_SOURCE=1 makes every child run src/.
 */
import { join } from 'node:path';
import { distIsCurrent } from '../../scripts/build-fingerprint.mjs';
import { REPO_ROOT as ROOT } from './repo-root.js';

const BROKER_CHILD_MAIN = join(ROOT, 'test', 'helpers', 'broker-child-main.mjs');
let current: boolean | undefined;

/** Whether children run dist/ (decided once per process: a build during a test run is not expected). */
export function runsBuilt(): boolean {
  current ??= process.env.FJORD_TEST_FROM_SOURCE !== '1' && distIsCurrent(ROOT);
  return current;
}

/** Node's arguments that run `src/<path>.ts` (e.g. 'cli/kafka-topics'): its dist/ build, or the source under tsx. */
export function nodeEntry(path: string): string[] {
  return runsBuilt() ? [join(ROOT, 'dist', `${path}.js`)] : ['--import', 'tsx', join(ROOT, 'src', `${path}.ts`)];
}

/** Node's arguments that run test/helpers/broker-child-main.mjs on the build `runsBuilt` picks; the spec's JSON follows. */
export function brokerChildEntry(): string[] {
  return runsBuilt() ? [BROKER_CHILD_MAIN, join(ROOT, 'dist')] : ['--import', 'tsx', BROKER_CHILD_MAIN, join(ROOT, 'src')];
}
