/**
 * The generic error-code walk the request metrics used before the walks generated per schema
 * (src/server/metrics/response-error-walks.gen.ts): every `errorCode` number in any object or array
 * of a response, found by enumerating keys. Kept as the reference the generated walks are checked
 * against (request-error-walks.test.ts) and timed against (bench/request-metrics-cost.ts).
 */
import { ERROR_SLOTS } from '../../../src/server/metrics/request-stats.js';

/** The response's error codes, counted into `errors` at `base + code + 1` (depth-bounded; byte arrays skipped). */
export function countErrorCodesGeneric(errors: Float64Array, base: number, value: object, depth = 0): void {
  if (depth > 6) return;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item === 'object' && item !== null) countErrorCodesGeneric(errors, base, item, depth + 1);
    }
    return;
  }
  if (ArrayBuffer.isView(value)) return;
  const fields = value as Record<string, unknown>;
  for (const key in fields) {
    const v = fields[key];
    if (typeof v === 'number') {
      if (key === 'errorCode' && v >= -1 && v < ERROR_SLOTS - 1) errors[base + v + 1]!++;
    } else if (typeof v === 'object' && v !== null) countErrorCodesGeneric(errors, base, v, depth + 1);
  }
}
