/**
 * Screenshots of the console's pages, taken by the browser tests (test/console/*.test.ts) as
 * artefacts of a run, never committed: each suite writes into its own folder under
 * $FJORD_TEST_ARTIFACTS (default $TMPDIR/fjord-console-artifacts), one full-page PNG per page it
 * visits, numbered in the order taken (the folder is emptied first), and prints where once. Pages open at 1280×800.
 *
 * The few pictures of docs/console.md come from the same tests: with FJORD_CONSOLE_DOC_IMAGES set
 * to a folder (docs/images/console), the shots named for the docs are also written there, the
 * 1280×800 viewport only, so that they stay small:
 *   npm run build && FJORD_CONSOLE_DOC_IMAGES=docs/images/console node --import tsx --test \
 *     --test-concurrency=1 test/console/console.test.ts test/console/console-groups.test.ts test/console/console-security.test.ts
 */
import { mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';

export const VIEWPORT = { width: 1280, height: 800 };

/** The folder every run's console screenshots go into. */
export const ARTIFACTS_DIR = resolve(process.env.FJORD_TEST_ARTIFACTS || join(tmpdir(), 'fjord-console-artifacts'));

/** One suite's screenshots: `suite` names its folder under ARTIFACTS_DIR. */
export class Screenshots {
  readonly dir: string;
  private readonly docDir: string | undefined;
  private taken = 0;
  private announced = false;

  constructor(suite: string) {
    this.dir = join(ARTIFACTS_DIR, suite);
    const docs = process.env.FJORD_CONSOLE_DOC_IMAGES;
    this.docDir = docs ? resolve(docs) : undefined;
  }

  /** A page at the docs' size that records the page's uncaught errors in `errors`. */
  async open(browser: Browser): Promise<{ page: Page; errors: string[] }> {
    const page = await browser.newPage({ viewport: VIEWPORT });
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(String(err)));
    page.setDefaultTimeout(15_000);
    return { page, errors };
  }

  /** Saves the whole page as NN-name.png; `doc` also writes the viewport as docs' `doc`.png. */
  async take(page: Page, name: string, doc?: string): Promise<string> {
    if (!this.announced) {
      // A run's pictures only: an earlier run's would mix with them.
      rmSync(this.dir, { recursive: true, force: true });
      mkdirSync(this.dir, { recursive: true });
      console.log(`console screenshots: ${this.dir}`);
      this.announced = true;
    }
    this.taken++;
    const path = join(this.dir, `${String(this.taken).padStart(2, '0')}-${name}.png`);
    await page.screenshot({ path, fullPage: true });
    if (doc && this.docDir) {
      mkdirSync(this.docDir, { recursive: true });
      await page.screenshot({ path: join(this.docDir, `${doc}.png`), fullPage: false });
    }
    return path;
  }
}
