/**
 * What the consumer-lag tests share: reading the Prometheus text exposition a broker's registry
 * serves, and committing a group's offset as a standalone consumer does, over the wire.
 */
import assert from 'node:assert/strict';
import { RawClient } from '../../helpers/raw-client.js';
import { OffsetCommitRequestCodec, OffsetCommitResponseCodec } from '../../../src/protocol/messages/08-offset-commit.js';
import { FindCoordinatorRequestCodec, FindCoordinatorResponseCodec } from '../../../src/protocol/messages/10-find-coordinator.js';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition (comments skipped). */
export function parse(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    assert.ok(m, `malformed exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

/** The value of the one sample of `name` whose labels include `labels` (undefined when none). */
export function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  assert.ok(found.length <= 1, `${name} ${JSON.stringify(labels)}: ${found.length} series`);
  return found[0]?.value;
}

/** Retries `step` every 50 ms until it answers error code 0, for up to 20 s. */
async function untilAccepted<T>(what: string, step: () => Promise<{ code: number; value: T }>): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const { code, value } = await step();
    if (code === 0) return value;
    assert.ok(Date.now() < deadline, `${what} answered ${code} until the deadline`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * The coordinator of `groupId` as the broker on `port` names it (its id and port). The first ask
 * creates `__consumer_offsets`: retried until it is loaded.
 */
export async function coordinatorOf(port: number, groupId: string): Promise<{ id: number; port: number }> {
  const raw = await RawClient.connect(port);
  try {
    return await untilAccepted('FindCoordinator', async () => {
      const found = await raw.request(10, FindCoordinatorRequestCodec, FindCoordinatorResponseCodec, 1, { key: groupId, keyType: 0 });
      return { code: found.errorCode, value: { id: found.nodeId, port: found.port } };
    });
  } finally {
    raw.close();
  }
}

/**
 * Commits `offset` on partition 0 of `topic` for `groupId` as a standalone consumer does
 * (OffsetCommit v2, no generation; kafkajs's admin.setOffsets spends 5 s in a consumer it starts
 * and stops), at the coordinator the broker on `port` names, retried while it loads.
 */
export async function commit(port: number, topic: string, groupId: string, offset: number): Promise<void> {
  await untilAccepted('OffsetCommit', async () => {
    const coordinator = await coordinatorOf(port, groupId);
    const raw = await RawClient.connect(coordinator.port);
    try {
      const res = await raw.request(8, OffsetCommitRequestCodec, OffsetCommitResponseCodec, 2, {
        groupId,
        generationIdOrMemberEpoch: -1,
        memberId: '',
        retentionTimeMs: -1n,
        topics: [{ name: topic, partitions: [{ partitionIndex: 0, committedOffset: BigInt(offset) }] }],
      });
      return { code: res.topics[0]!.partitions[0]!.errorCode, value: undefined };
    } finally {
      raw.close();
    }
  });
}
