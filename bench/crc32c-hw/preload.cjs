// node --require bench/crc32c-hw/preload.cjs: @node-rs/crc32's crc32c answered by crc32c-hw.c's
// addon (path in FJORD_CRC32C_HW_ADDON) for byte arrays; strings keep the original. Loaded before
// the broker's modules, so their `import { crc32c } from '@node-rs/crc32'` sees the replacement.
// An experiment for bench/crc32c-hw.ts, not a way to run the broker.
'use strict';
const hw = require(process.env.FJORD_CRC32C_HW_ADDON);
const rs = require(require.resolve('@node-rs/crc32', { paths: [process.cwd()] }));
const original = rs.crc32c;
rs.crc32c = (input, initial) => (typeof input === 'string' ? original(input, initial) : hw.crc32c(input, initial ?? 0));
process.stderr.write('crc32c-hw: @node-rs/crc32 crc32c replaced by the SSE4.2 addon\n');
