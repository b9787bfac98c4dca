/**
 * What ACLs cost on the hot path (issue 15). Run: node --import tsx bench/acl-cost.ts
 *
 * 1. The decision itself: Authorizer.authorize with 1,000 literal + 100 prefixed topic ACLs,
 *    uncached (first call per resource) and cached (every later call), in ns per call.
 * 2. End to end: 4,000 Produce requests (one 10-record batch each, acks=1, 4 in flight) and
 *    4,000 Fetch requests against an in-process broker without an authorizer and with one
 *    (User:ANONYMOUS allowed by a literal ACL among 1,000 others), requests per second.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Authorizer } from '../src/security/authorizer/authorizer.js';
import { EmbeddedAcls } from '../src/metadata/embedded/embedded-acls.js';
import { AclOperation, AclPermissionType, PatternType, ResourceType, type AclBinding } from '../src/security/authorizer/acl-model.js';
import { ANONYMOUS, userPrincipal } from '../src/security/principal.js';
import { startTestBroker } from '../test/helpers/broker.js';
import { RawClient } from '../test/helpers/raw-client.js';
import { batchOf, createTopic } from '../test/server/handlers/data-plane-helpers.js';
import { FetchRequestCodec, FetchResponseCodec, ProduceRequestCodec, ProduceResponseCodec } from '../src/protocol/messages/index.js';

function manyAcls(): AclBinding[] {
  const out: AclBinding[] = [];
  for (let i = 0; i < 1000; i++)
    out.push({
      pattern: { resourceType: ResourceType.TOPIC, name: `topic-${i}`, patternType: PatternType.LITERAL },
      entry: { principal: `User:u${i % 50}`, host: '*', operation: AclOperation.WRITE, permissionType: AclPermissionType.ALLOW },
    });
  for (let i = 0; i < 100; i++)
    out.push({
      pattern: { resourceType: ResourceType.TOPIC, name: `pre-${i}-`, patternType: PatternType.PREFIXED },
      entry: { principal: `User:u${i}`, host: '*', operation: AclOperation.READ, permissionType: AclPermissionType.ALLOW },
    });
  for (const operation of [AclOperation.WRITE, AclOperation.READ]) {
    out.push({
      pattern: { resourceType: ResourceType.TOPIC, name: 'bench', patternType: PatternType.LITERAL },
      entry: { principal: 'User:ANONYMOUS', host: '*', operation, permissionType: AclPermissionType.ALLOW },
    });
  }
  return out;
}

async function decisionCost(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'fjord-aclbench-'));
  const a = await Authorizer.open({ storage: new EmbeddedAcls(dir), superUsers: [], allowEveryoneIfNoAclFound: false });
  await a.create(manyAcls());
  const n = 200_000;
  const p = userPrincipal('u7');
  let t0 = process.hrtime.bigint();
  for (let i = 0; i < 2000; i++) a.authorize(p, '10.0.0.1', AclOperation.WRITE, ResourceType.TOPIC, `fresh-${i}`);
  const uncached = Number(process.hrtime.bigint() - t0) / 2000;
  t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) a.authorize(p, '10.0.0.1', AclOperation.WRITE, ResourceType.TOPIC, `topic-${i % 1000}`);
  const cached = Number(process.hrtime.bigint() - t0) / n;
  console.log(`decision: uncached ${uncached.toFixed(0)} ns/call (1,000 literal + 100 prefixed ACLs), cached ${cached.toFixed(0)} ns/call`);
  await rm(dir, { recursive: true, force: true });
}

async function endToEnd(withAuthorizer: boolean): Promise<{ produce: number; fetch: number }> {
  const b = await startTestBroker(withAuthorizer ? { 'authorizer.class.name': 'kafka.security.authorizer.AclAuthorizer' } : {});
  try {
    await createTopic(b, 'bench');
    if (withAuthorizer) await b.broker.services.authorizer!.create(manyAcls());
    const c = await RawClient.connect(b.port);
    const batch = batchOf(Array.from({ length: 10 }, (_, i) => `value-${i}`));
    const total = 4000;
    const inflight = 4;
    const time = async (one: () => Promise<void>): Promise<number> => {
      let next = 0;
      const t0 = performance.now();
      await Promise.all(
        Array.from({ length: inflight }, async () => {
          while (next++ < total) await one();
        }),
      );
      return total / ((performance.now() - t0) / 1000);
    };
    const produce = await time(async () => {
      const r = await c.request(0, ProduceRequestCodec, ProduceResponseCodec, 9, {
        acks: 1,
        timeoutMs: 5000,
        topicData: [{ name: 'bench', partitionData: [{ index: 0, records: batch }] }],
      });
      if (r.responses[0]!.partitionResponses[0]!.errorCode !== 0) throw new Error(`produce failed ${r.responses[0]!.partitionResponses[0]!.errorCode}`);
    });
    const fetch = await time(async () => {
      const r = await c.request(1, FetchRequestCodec, FetchResponseCodec, 12, {
        replicaId: -1,
        maxWaitMs: 0,
        minBytes: 0,
        maxBytes: 65536,
        topics: [{ topic: 'bench', partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 65536 }] }],
      });
      if (r.responses[0]!.partitions[0]!.errorCode !== 0) throw new Error('fetch failed');
    });
    c.close();
    return { produce, fetch };
  } finally {
    await b.stop();
  }
}

await decisionCost();
void ANONYMOUS;
// Alternating order, several rounds: the machine is shared, so compare medians, not one pair.
for (let round = 0; round < 4; round++) {
  for (const w of round % 2 === 0 ? [false, true] : [true, false]) {
    const r = await endToEnd(w);
    console.log(`round ${round} ${w ? 'authorizer   ' : 'no authorizer'}: produce ${r.produce.toFixed(0)} req/s, fetch ${r.fetch.toFixed(0)} req/s`);
  }
}
