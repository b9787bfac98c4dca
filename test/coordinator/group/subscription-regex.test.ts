import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { RE2JS } from 're2js';
import {
  MAX_SUBSCRIPTION_REGEX_LENGTH,
  MAX_SUBSCRIPTION_REGEX_PROGRAM,
  type CompiledSubscriptionRegex,
  compileSubscriptionRegex,
  estimatedProgramSize,
  matchTopics,
  matchTopicsInSlices,
} from '../../../src/coordinator/group/subscription-regex.js';
import { memberTopicNames, prepareRegexMatches } from '../../../src/coordinator/group/consumer/target-assignment.js';
import type { ConsumerMember } from '../../../src/coordinator/group/consumer/member.js';
import { FakeTopics } from './consumer/harness.js';
import { consumerGroupEnv } from '../../../src/coordinator/group/consumer/consumer-service.js';
import type { MetadataStore } from '../../../src/metadata/metadata-store.js';
import { defaultBrokerConfig } from '../../../src/server/config/build-broker-config.js';

function compiled(regex: string): CompiledSubscriptionRegex {
  const r = compileSubscriptionRegex(regex);
  assert.ok(r.ok, r.ok ? '' : r.message);
  return r;
}

function invalidMessage(regex: string): string {
  const r = compileSubscriptionRegex(regex);
  assert.equal(r.ok, false, `${regex} compiled`);
  return r.ok ? '' : r.message;
}

const TOPICS = ['orders-eu', 'orders-us', 'x-orders-eu', 'payments', 'Orders-EU', 'α-topic', 'a.b', 'axb'];

test('a topic matches when its whole name matches, in RE2J syntax', () => {
  assert.deepEqual(matchTopics(compiled('orders-.*'), TOPICS), ['orders-eu', 'orders-us']);
  assert.deepEqual(matchTopics(compiled('orders'), TOPICS), [], 'no substring matches');
  assert.deepEqual(matchTopics(compiled('.*orders.*'), TOPICS), ['orders-eu', 'orders-us', 'x-orders-eu']);
  assert.deepEqual(matchTopics(compiled('(?i)orders-eu'), TOPICS), ['orders-eu', 'Orders-EU']);
  assert.deepEqual(matchTopics(compiled('\\p{Greek}-topic'), TOPICS), ['α-topic']);
  assert.deepEqual(matchTopics(compiled('\\Qa.b\\E'), TOPICS), ['a.b'], '\\Q...\\E is literal');
  assert.deepEqual(matchTopics(compiled('[[:alpha:]]+'), TOPICS), ['payments', 'axb']);
  assert.deepEqual(matchTopics(compiled('(?P<region>orders)-(eu|us)'), TOPICS), ['orders-eu', 'orders-us']);
});

test("what java.util.regex and JavaScript accept but RE2J refuses is INVALID_REGULAR_EXPRESSION with Kafka's message", () => {
  assert.equal(invalidMessage('orders-(?=eu)'), 'SubscribedTopicRegex `orders-(?=eu)` is not a valid regular expression: invalid or unsupported Perl syntax.');
  assert.equal(invalidMessage('(orders)-\\1'), 'SubscribedTopicRegex `(orders)-\\1` is not a valid regular expression: invalid escape sequence.');
  assert.match(invalidMessage('a++'), /invalid nested repetition operator/);
  assert.match(invalidMessage('(?<!x)orders'), /invalid named capture/); // lookbehind: RE2J reads (?< as a name
  assert.match(invalidMessage('orders-\\Z'), /invalid escape sequence/);
  assert.match(invalidMessage('orders-('), /missing closing \)/);
  assert.match(invalidMessage('*orders'), /missing argument to repetition operator/);
});

test('bounds: pattern length and the program its repetitions expand to, refused before any costly compile', () => {
  const longest = `(${Array.from({ length: 200 }, (_, i) => `t${i}`).join('|')})`.padEnd(MAX_SUBSCRIPTION_REGEX_LENGTH, 'x');
  assert.equal(longest.length, MAX_SUBSCRIPTION_REGEX_LENGTH);
  compiled(longest);
  assert.match(invalidMessage(`${longest}x`), new RegExp(`longer than ${MAX_SUBSCRIPTION_REGEX_LENGTH} characters\\.$`));
  compiled('a{1000}');
  for (const heavy of ['(abcdefghij){1000}', 'a{1000}'.repeat(100), '((abcdefghij){10}){100}', '([a-z]{1,100}){100}']) {
    const start = performance.now();
    assert.match(invalidMessage(heavy), /repetitions expand past 4096 instructions|invalid repeat count/, heavy);
    assert.ok(performance.now() - start < 100, `${heavy.slice(0, 30)}: ${performance.now() - start} ms`);
  }
  assert.equal(MAX_SUBSCRIPTION_REGEX_PROGRAM, 4096);
});

/** Small RE2 patterns from a grammar: literals, classes, groups, alternation, quantifiers. */
const patternArb = fc.letrec<{ re: string }>((tie) => ({
  re: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constantFrom('a', 'b', '.', '[a-z]', '[^x]', '\\d', '\\p{Greek}', '\\Qa{3}\\E', 'é'),
    fc.tuple(tie('re'), tie('re')).map(([x, y]) => x + y),
    fc.tuple(tie('re'), tie('re')).map(([x, y]) => `(${x}|${y})`),
    fc.tuple(tie('re'), fc.constantFrom('*', '+', '?', '{2}', '{3,5}', '{0,7}', '{4,}')).map(([x, q]) => `(?:${x})${q}`),
  ),
})).re;

test('the estimate never undercounts the compiled program', () => {
  fc.assert(
    fc.property(patternArb, (p) => {
      let size: number;
      try {
        size = RE2JS.compile(p).programSize();
      } catch {
        return; // nested repeats past RE2's own limit: refused by compile
      }
      assert.ok(estimatedProgramSize(p) >= size, `${p}: estimate ${estimatedProgramSize(p)} < ${size}`);
    }),
    { numRuns: 400 },
  );
});

test('a pathological pattern over 10,000 long names: linear time, no backtracking', () => {
  const regex = compiled('(a+)+$');
  const took: number[] = [];
  for (const length of [60, 240]) {
    const names = Array.from({ length: 10_000 }, (_, i) => `${'a'.repeat(length)}!${i}`);
    const start = performance.now();
    assert.deepEqual(matchTopics(regex, names), []);
    const ms = performance.now() - start;
    took.push(ms);
    console.log(`(a+)+$ over 10,000 names of ${length + 2}+ characters: ${ms.toFixed(1)} ms`);
    // A backtracking engine needs ~2^length steps per name; RE2 a few per character.
    assert.ok(ms < 3000, `${ms} ms`);
  }
  // Four times the length, at most about four times the time (16 leaves room for a loaded machine).
  assert.ok(took[1]! < 16 * Math.max(took[0]!, 5), `60 chars: ${took[0]} ms, 240 chars: ${took[1]} ms`);
  assert.deepEqual(matchTopics(regex, ['aaaa', 'aab']), ['aaaa']);
});

test('matchTopicsInSlices: the same result, yielding to the event loop between slices', async () => {
  const names = Array.from({ length: 5000 }, (_, i) => `topic-${i}`);
  const regex = compiled('topic-[0-9]*7');
  let done = false;
  const pending = matchTopicsInSlices(regex, names, 0).then((r) => {
    done = true;
    return r;
  });
  let servedMeanwhile = false;
  setImmediate(() => {
    servedMeanwhile = !done;
  });
  assert.deepEqual(await pending, matchTopics(regex, names));
  assert.ok(servedMeanwhile, 'an immediate queued after the start ran before the end');
  assert.deepEqual(await matchTopicsInSlices(regex, []), []);
});

test('a pattern is compiled once while cached (a near-limit one takes tens of milliseconds)', () => {
  const first = compileSubscriptionRegex('(?:[a-z-]?){300}(?:a|aa)*x');
  assert.equal(compileSubscriptionRegex('(?:[a-z-]?){300}(?:a|aa)*x'), first);
  assert.equal(compileSubscriptionRegex('(x'), compileSubscriptionRegex('(x'), 'refusals too');
});

test('prepareRegexMatches: the topics matched in slices ahead of the operation, which then matches nothing itself', async () => {
  const topics = new FakeTopics();
  for (let i = 0; i < 50; i++) topics.add(`prep-${i}`, 1);
  topics.add('other', 1);
  let matched = 0;
  const counting = (pattern: string) => {
    const r = compileSubscriptionRegex(pattern);
    return r.ok ? { ...r, matches: (t: string) => (matched++, r.matches(t)) } : r;
  };
  const env = { settings: { sessionTimeoutMs: 1, heartbeatIntervalMs: 1, maxSize: 1, assignors: [] }, topics, compileRegex: counting };
  const member = { subscribedTopicRegex: 'prep-[0-9]+', subscribedTopicNames: [] } as unknown as ConsumerMember;
  await prepareRegexMatches('prep-[0-9]+', env);
  assert.equal(matched, 51);
  assert.equal(memberTopicNames(member, env, new Map()).length, 50);
  assert.equal(matched, 51, 'the operation used what was prepared');
  topics.add('prep-new', 1);
  assert.equal(memberTopicNames(member, env, new Map()).length, 50, 'not prepared for the new topics: matched again in the operation');
  assert.equal(matched, 103);
});

test('the patterns in use are matched again in the background when the cluster topics change', async () => {
  const topics = new Map<string, { name: string; topicId: string; internal: boolean; partitions: { replicas: number[] }[] }>();
  const listeners: ((topic: string) => void)[] = [];
  const add = (name: string) => {
    topics.set(name, { name, topicId: `id-${name}`, internal: false, partitions: [{ replicas: [0] }] });
    for (const l of listeners) l(name);
  };
  const metadata = {
    onChange: (l: (topic: string) => void) => void listeners.push(l),
    topic: (name: string) => topics.get(name),
    topics: () => [...topics.values()],
    brokers: () => [],
  } as unknown as MetadataStore;
  let matched = 0;
  const counting = (pattern: string) => {
    const r = compileSubscriptionRegex(pattern);
    return r.ok ? { ...r, matches: (t: string) => (matched++, r.matches(t)) } : r;
  };
  const env = consumerGroupEnv(defaultBrokerConfig({}), metadata, counting);
  const member = { subscribedTopicRegex: 'bg-.*', subscribedTopicNames: [] } as unknown as ConsumerMember;
  add('bg-1');
  assert.deepEqual(memberTopicNames(member, env, new Map()), ['bg-1']);
  add('bg-2');
  add('other');
  const before = matched;
  const deadline = Date.now() + 5000;
  while (matched < before + 3) {
    assert.ok(Date.now() < deadline, 'not matched again in the background');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await new Promise((resolve) => setImmediate(resolve));
  const settled = matched;
  assert.deepEqual(memberTopicNames(member, env, new Map()), ['bg-1', 'bg-2']);
  assert.equal(matched, settled, 'the heartbeat found them matched');
});
