/**
 * The loop AlterConfigs and IncrementalAlterConfigs share: each resource is changed on its own
 * and answered with its own error; a resource named twice in one request is refused, as Kafka does.
 */
import { ErrorCode } from '../../protocol/errors.js';
import { errorOutcome } from '../admin/index.js';

interface ConfigResource {
  resourceType: number;
  resourceName: string;
}

export interface ConfigResourceResult {
  resourceType: number;
  resourceName: string;
  errorCode: number;
  errorMessage: string | null;
}

export async function alterEachResource<R extends ConfigResource>(
  resources: readonly R[],
  apply: (resource: R) => Promise<void>,
): Promise<ConfigResourceResult[]> {
  const seen = new Map<string, number>();
  for (const r of resources) {
    const key = `${r.resourceType}:${r.resourceName}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  const results: ConfigResourceResult[] = [];
  for (const r of resources) {
    const base = { resourceType: r.resourceType, resourceName: r.resourceName };
    if (seen.get(`${r.resourceType}:${r.resourceName}`)! > 1) {
      results.push({ ...base, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Duplicate resource in request.' });
      continue;
    }
    try {
      await apply(r);
      results.push({ ...base, errorCode: ErrorCode.NONE, errorMessage: null });
    } catch (err) {
      results.push({ ...base, ...errorOutcome(err) });
    }
  }
  return results;
}
