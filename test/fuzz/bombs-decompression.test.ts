// Decompression bombs of issue 9: legacy gzip inflating to 100 MB, a gzip value down-converted
// for Fetch v3, a zstd frame declaring 2 GB read by a timestamp lookup. See bomb-suite.ts.
import { bombSuite } from './bomb-suite.js';

bombSuite(['legacy-gzip-100m', 'gzip-200m-fetch-v3', 'zstd-2g-list-offsets']);
