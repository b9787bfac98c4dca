/**
 * bin/kafka-features.sh as a user runs it (child processes of the built tool, exit codes and
 * output as Kafka 3.9's FeatureCommand): against a Fjord broker, which supports no feature flag
 * (as Kafka 3.9 in ZooKeeper mode: describe prints nothing, every change is refused with the
 * broker's reason), and against a broker that claims a test feature (describe's line, upgrade,
 * downgrade, disable, --dry-run, --unsafe). Needs `npx tsc -p tsconfig.json` first.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { run } from '../helpers/run.js';

const TOOL = fileURLToPath(new URL('../../bin/kafka-features.sh', import.meta.url));
const features = (...args: string[]) => run(TOOL, args, { timeoutMs: 30_000 });

let plain: TestBroker;
let featured: TestBroker;
before(async () => {
  plain = await startTestBroker();
  featured = await startTestBroker({}, undefined, { supportedFeatures: new Map([['test.feature', { min: 1, max: 3 }]]) });
});
after(async () => {
  await plain.stop();
  await featured.stop();
});

test('--help exits 0; command line errors are one line with exit 1', async () => {
  const help = await features('--help');
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^Usage: kafka-features\.sh \[options\]/);
  assert.match(help.stdout, /describe\s+Describes the current active feature flags\./);

  const cases: [string[], RegExp][] = [
    [['describe'], /one of the arguments --bootstrap-server --bootstrap-controller is required/],
    [['--bootstrap-server', plain.bootstrap], /too few arguments/],
    [['--bootstrap-server', plain.bootstrap, 'frobnicate'], /invalid choice: 'frobnicate'/],
    [['--bootstrap-server', plain.bootstrap, 'upgrade'], /You must specify at least one feature to upgrade/],
    [['--bootstrap-server', plain.bootstrap, 'upgrade', '--feature', 'baaz'], /Can't parse feature=level string baaz: equals sign not found\./],
    [['--bootstrap-server', plain.bootstrap, 'upgrade', '--feature', 'w=tf'], /Can't parse feature=level string w=tf: unable to parse tf as a short\./],
    [['--bootstrap-server', plain.bootstrap, 'upgrade', '--feature', 'a=1', '--feature', 'a=2'], /Feature a was specified more than once\./],
    [['--bootstrap-server', plain.bootstrap, 'upgrade', '--unsafe'], /unrecognized arguments: '--unsafe'/],
    [
      ['--bootstrap-server', plain.bootstrap, 'upgrade', '--metadata', '3.2-IV0'],
      /Unknown metadata\.version 3\.2-IV0\. Supported metadata\.version are 3\.3-IV0, .*3\.9-IV0$/m,
    ],
  ];
  for (const [args, message] of cases) {
    const r = await features(...args);
    assert.equal(r.code, 1, args.join(' '));
    assert.match(r.stderr, message, args.join(' '));
    assert.equal(r.stderr.trim().split('\n').length, 1, `one line: ${r.stderr}`);
    assert.doesNotMatch(r.stderr, /\n\s+at /);
  }
});

test('a Fjord broker: describe prints nothing; upgrade, downgrade and disable are refused with the broker reason', async () => {
  const d = await features('--bootstrap-server', plain.bootstrap, 'describe');
  assert.deepEqual([d.code, d.stdout, d.stderr], [0, '', '']);

  const up = await features('--bootstrap-server', plain.bootstrap, 'upgrade', '--feature', 'transaction.version=2', '--metadata', '3.3-IV2');
  assert.equal(up.code, 1);
  assert.equal(
    up.stdout,
    ' `metadata` flag is deprecated and may be removed in a future release.\n' +
      'Could not upgrade metadata.version to 6. Could not apply finalized feature update because the provided feature is not supported.\n' +
      'Could not upgrade transaction.version to 2. Could not apply finalized feature update because the provided feature is not supported.\n',
  );
  assert.match(up.stderr, /2 out of 2 operation\(s\) failed\.$/m);

  const down = await features('--bootstrap-server', plain.bootstrap, 'downgrade', '--unsafe', '--feature', 'group.version=1');
  assert.equal(down.code, 1);
  assert.equal(
    down.stdout,
    'Could not downgrade group.version to 1. Could not apply finalized feature update because the provided feature is not supported.\n',
  );

  const off = await features('--bootstrap-server', plain.bootstrap, 'disable', '--feature', 'metadata.version', '--dry-run');
  assert.equal(off.code, 1);
  assert.equal(off.stdout, 'Can not disable metadata.version. Can not delete non-existing finalized feature.\n');
  assert.match(off.stderr, /1 out of 1 operation\(s\) failed\./);
});

test('a broker with a supported feature: describe lines, upgrade, --dry-run, downgrade, disable as Kafka prints them', async () => {
  const server = ['--bootstrap-server', featured.bootstrap];
  const describe = async () => (await features(...server, 'describe')).stdout;
  assert.equal(await describe(), 'Feature: test.feature\tSupportedMinVersion: 1\tSupportedMaxVersion: 3\tFinalizedVersionLevel: 0\tEpoch: 0\n');

  const dry = await features(...server, 'upgrade', '--feature', 'test.feature=3', '--dry-run');
  assert.deepEqual([dry.code, dry.stdout], [0, 'test.feature can be upgraded to 3.\n']);
  assert.match(await describe(), /FinalizedVersionLevel: 0\tEpoch: 0\n$/, 'a dry run changes nothing');

  const up = await features(...server, 'upgrade', '--feature', 'test.feature=3');
  assert.deepEqual([up.code, up.stdout, up.stderr], [0, 'test.feature was upgraded to 3.\n', '']);
  assert.equal(await describe(), 'Feature: test.feature\tSupportedMinVersion: 1\tSupportedMaxVersion: 3\tFinalizedVersionLevel: 3\tEpoch: 1\n');

  const wrongWay = await features(...server, 'upgrade', '--feature', 'test.feature=1');
  assert.equal(wrongWay.code, 1);
  assert.match(
    wrongWay.stdout,
    /^Could not upgrade test\.feature to 1\. Can not downgrade finalized feature from existing versionLevel:3 to provided versionLevel:1/,
  );

  const down = await features(...server, 'downgrade', '--feature', 'test.feature=2');
  assert.deepEqual([down.code, down.stdout], [0, 'test.feature was downgraded to 2.\n']);
  const off = await features(...server, 'disable', '--feature', 'test.feature', '--unsafe');
  assert.deepEqual([off.code, off.stdout], [0, 'test.feature was disabled.\n']);
  assert.equal(await describe(), 'Feature: test.feature\tSupportedMinVersion: 1\tSupportedMaxVersion: 3\tFinalizedVersionLevel: 0\tEpoch: 3\n');
});
