/**
 * Writes dashboards/fjord-overview.json from tools/dashboard/fjord-overview.ts:
 *   npx tsx tools/dashboard/generate.ts
 * test/server/metrics/dashboard.test.ts fails until the committed file is regenerated.
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderFjordOverview } from './fjord-overview.js';

const target = fileURLToPath(new URL('../../dashboards/fjord-overview.json', import.meta.url));
writeFileSync(target, renderFjordOverview());
console.log(`wrote ${target}`);
