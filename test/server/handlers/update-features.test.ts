/**
 * UpdateFeatures (57) and the features of ApiVersions (18), as Kafka 3.9's ZooKeeper-mode broker:
 * Fjord supports no feature flag, so it advertises none, finalizes none (epoch 0) and refuses
 * every upgrade "not supported"; with a feature a test broker claims to support, every check of
 * Kafka's controller, validateOnly, version 2's all-or-nothing answer, and the finalized levels
 * kept across a restart of a single broker.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestBroker, type TestBroker } from '../../helpers/broker.js';
import { RawClient } from '../../helpers/raw-client.js';
import {
  ApiVersionsRequestCodec,
  ApiVersionsResponseCodec,
  UpdateFeaturesRequestCodec,
  UpdateFeaturesResponseCodec,
} from '../../../src/protocol/messages/index.js';
import { ErrorCode } from '../../../src/protocol/errors.js';

const [UPGRADE, SAFE, UNSAFE] = [1, 2, 3];
const NOT_SUPPORTED = 'Could not apply finalized feature update because the provided feature is not supported.';

async function features(c: RawClient) {
  const r = await c.request(18, ApiVersionsRequestCodec, ApiVersionsResponseCodec, 3, { clientSoftwareName: 't', clientSoftwareVersion: '1' });
  return {
    supported: r.supportedFeatures.map((f) => [f.name, f.minVersion, f.maxVersion]),
    epoch: r.finalizedFeaturesEpoch,
    finalized: r.finalizedFeatures.map((f) => [f.name, f.maxVersionLevel]),
  };
}

function update(c: RawClient, v: number, updates: [feature: string, level: number, type: number][], validateOnly = false) {
  return c.request(57, UpdateFeaturesRequestCodec, UpdateFeaturesResponseCodec, v, {
    timeoutMs: 1000,
    featureUpdates: updates.map(([feature, maxVersionLevel, upgradeType]) => ({
      feature,
      maxVersionLevel,
      upgradeType,
      allowDowngrade: upgradeType !== UPGRADE,
    })),
    validateOnly,
  });
}
const perFeature = (r: Awaited<ReturnType<typeof update>>) => r.results.map((x) => [x.feature, x.errorCode, x.errorMessage]);

test('a Fjord broker advertises no feature, finalizes none at epoch 0 and refuses every update as Kafka 3.9 in ZooKeeper mode', async () => {
  const b = await startTestBroker();
  const c = await RawClient.connect(b.port);
  try {
    assert.deepEqual(await features(c), { supported: [], epoch: 0n, finalized: [] });
    const r = await update(c, 1, [
      ['transaction.version', 2, UPGRADE],
      ['group.version', 0, SAFE],
      ['', 1, UPGRADE],
    ]);
    assert.equal(r.errorCode, ErrorCode.NONE);
    assert.deepEqual(perFeature(r), [
      ['transaction.version', ErrorCode.INVALID_REQUEST, NOT_SUPPORTED],
      ['group.version', ErrorCode.INVALID_REQUEST, 'Can not delete non-existing finalized feature.'],
      ['', ErrorCode.INVALID_REQUEST, 'Feature name can not be empty.'],
    ]);
    assert.deepEqual(await features(c), { supported: [], epoch: 0n, finalized: [] });
  } finally {
    c.close();
    await b.stop();
  }
});

test("with a supported feature: Kafka's checks, validateOnly, v0's allowDowngrade, v2 all or nothing; a restart keeps the levels", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'fjord-features-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const supportedFeatures = new Map([['test.feature', { min: 1, max: 3 }]]);
  let b: TestBroker = await startTestBroker({}, dir, { supportedFeatures });
  let c = await RawClient.connect(b.port);
  try {
    assert.deepEqual((await features(c)).supported, [['test.feature', 1, 3]]);
    assert.deepEqual(perFeature(await update(c, 1, [['test.feature', 2, UPGRADE]], true)), [['test.feature', 0, null]]);
    assert.deepEqual(await features(c), { supported: [['test.feature', 1, 3]], epoch: 0n, finalized: [] }, 'validateOnly wrote nothing');

    assert.deepEqual(perFeature(await update(c, 1, [['test.feature', 2, UPGRADE]])), [['test.feature', 0, null]]);
    assert.deepEqual((await features(c)).finalized, [['test.feature', 2]]);
    assert.equal((await features(c)).epoch, 1n);

    const refused = await update(c, 1, [
      ['test.feature', 2, UPGRADE],
      ['other', 1, UPGRADE],
    ]);
    assert.deepEqual(perFeature(refused), [
      ['test.feature', ErrorCode.INVALID_REQUEST, 'Can not upgrade a finalized feature from existing versionLevel:2 to the same value.'],
      ['other', ErrorCode.INVALID_REQUEST, NOT_SUPPORTED],
    ]);
    const cases: [number, number, RegExp][] = [
      [1, UPGRADE, /^Can not downgrade finalized feature from existing versionLevel:2 to provided versionLevel:1 without setting the downgradeType to SAFE/],
      [3, SAFE, /^When the downgradeType is set to SAFE in the request, the provided versionLevel:3 can not be greater than existing versionLevel:2\.$/],
      [0, UPGRADE, /^Can not provide versionLevel: 0 less than 1/],
      [4, UPGRADE, /not supported/],
      [2, 7, /^Received unknown upgrade type\.$/],
    ];
    for (const [level, type, message] of cases) {
      const [row] = perFeature(await update(c, 1, [['test.feature', level, type]]));
      assert.equal(row![1], ErrorCode.INVALID_REQUEST, `${level}/${type}`);
      assert.match(String(row![2]), message);
    }
    assert.equal((await features(c)).epoch, 1n, 'nothing refused was written');

    // v0: allowDowngrade is the downgrade type.
    assert.deepEqual(perFeature(await update(c, 0, [['test.feature', 1, SAFE]])), [['test.feature', 0, null]]);
    assert.deepEqual((await features(c)).finalized, [['test.feature', 1]]);
    // v2: one refusal fails the whole request, answered at the top.
    const v2 = await update(c, 2, [
      ['test.feature', 3, UPGRADE],
      ['other', 1, UPGRADE],
    ]);
    assert.deepEqual([v2.errorCode, v2.errorMessage, v2.results], [ErrorCode.INVALID_REQUEST, NOT_SUPPORTED, []]);
    assert.deepEqual((await features(c)).finalized, [['test.feature', 1]]);
    assert.equal((await update(c, 2, [['test.feature', 3, UPGRADE]])).errorCode, ErrorCode.NONE);
    assert.deepEqual(await features(c), { supported: [['test.feature', 1, 3]], epoch: 3n, finalized: [['test.feature', 3]] });

    c.close();
    await b.stop();
    b = await startTestBroker({}, dir, { supportedFeatures });
    c = await RawClient.connect(b.port);
    assert.deepEqual(await features(c), { supported: [['test.feature', 1, 3]], epoch: 3n, finalized: [['test.feature', 3]] }, 'kept across the restart');
    // Disabling (level 0, a downgrade type) deletes the finalized feature.
    assert.deepEqual(perFeature(await update(c, 1, [['test.feature', 0, UNSAFE]])), [['test.feature', 0, null]]);
    assert.deepEqual(await features(c), { supported: [['test.feature', 1, 3]], epoch: 4n, finalized: [] });
  } finally {
    c.close();
    await b.stop();
  }
});
