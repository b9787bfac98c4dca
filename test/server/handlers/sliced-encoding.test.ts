/**
 * A response encoded in slices is byte for byte the response encoded in one go, at every version
 * of the APIs that use it (flexible and not: the array's length is an int32 or a varint).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Writer, type Input, type MessageCodec } from '../../../src/protocol/primitives/index.js';
import {
  DescribeConfigsResponseCodec,
  DescribeGroupsResponseCodec,
  MetadataResponseCodec,
  type DescribeConfigsResponse,
  type DescribeGroupsResponse,
  type MetadataResponse,
} from '../../../src/protocol/messages/index.js';
import { encodeInSlices } from '../../../src/server/handlers/sliced-encoding.js';
import { LoopSlicer } from '../../../src/common/slices.js';

function whole<T>(codec: MessageCodec<T>, res: Input<T>, version: number): Buffer {
  const w = new Writer(64);
  codec.write(w, res, version);
  return w.result();
}

/** Always due: every chunk pauses (the worst case for the layout), and the pauses are counted. */
class CountingSlicer extends LoopSlicer {
  pauses = 0;
  constructor() {
    super(0);
  }
  override async pause(): Promise<void> {
    this.pauses++;
    await super.pause();
  }
}

async function sliced<T>(codec: MessageCodec<T>, res: Input<T>, field: keyof T & string, version: number): Promise<Buffer> {
  const slicer = new CountingSlicer();
  const write = await encodeInSlices(codec, res, field, version, slicer);
  const items = (res as Record<string, unknown[]>)[field]!.length;
  // not the fallback (one encoding in one go): a 16-item first chunk, so more items pause
  if (items > 16) assert.ok(slicer.pauses > 0, `${codec.name} v${version}: encoded in slices`);
  const w = new Writer(64, { referenceThreshold: 1024 });
  write(w);
  return Buffer.concat(w.parts());
}

const topics = (n: number) =>
  Array.from({ length: n }, (_, i) => ({
    errorCode: i % 7 === 0 ? 3 : 0,
    name: `topic-${i}`,
    topicId: 'AAAAAAAAAAAAAAAAAAAAAQ',
    isInternal: false,
    partitions: Array.from({ length: i % 5 }, (_, p) => ({
      errorCode: 0,
      partitionIndex: p,
      leaderId: 0,
      leaderEpoch: i,
      replicaNodes: [0],
      isrNodes: [0],
      offlineReplicas: [],
    })),
    topicAuthorizedOperations: -2147483648,
  }));

test('Metadata: sliced and whole encodings are the same bytes at v0-v12, 0 to 300 topics', async () => {
  for (let v = MetadataResponseCodec.minVersion; v <= MetadataResponseCodec.maxVersion; v++) {
    for (const n of [0, 1, 2, 65, 300]) {
      const res: Input<MetadataResponse> = {
        throttleTimeMs: 5,
        brokers: [{ nodeId: 0, host: 'localhost', port: 9092, rack: null }],
        clusterId: 'c',
        controllerId: 0,
        topics: topics(n),
        clusterAuthorizedOperations: 7,
      };
      assert.deepEqual(await sliced(MetadataResponseCodec, res, 'topics', v), whole(MetadataResponseCodec, res, v), `v${v} n=${n}`);
    }
  }
});

test('DescribeConfigs and DescribeGroups: the same bytes at every version', async () => {
  for (let v = DescribeConfigsResponseCodec.minVersion; v <= DescribeConfigsResponseCodec.maxVersion; v++) {
    const res: Input<DescribeConfigsResponse> = {
      throttleTimeMs: 1,
      results: Array.from({ length: 200 }, (_, i) => ({
        errorCode: 0,
        errorMessage: i % 3 ? null : 'why',
        resourceType: 2,
        resourceName: `t${i}`,
        configs: [
          {
            name: 'cleanup.policy',
            value: 'delete',
            readOnly: false,
            isDefault: true,
            configSource: 5,
            isSensitive: false,
            synonyms: [{ name: 'log.cleanup.policy', value: 'delete', source: 5 }],
            configType: 7,
            documentation: 'doc',
          },
        ],
      })),
    };
    assert.deepEqual(await sliced(DescribeConfigsResponseCodec, res, 'results', v), whole(DescribeConfigsResponseCodec, res, v), `DescribeConfigs v${v}`);
  }
  for (let v = DescribeGroupsResponseCodec.minVersion; v <= DescribeGroupsResponseCodec.maxVersion; v++) {
    const res: Input<DescribeGroupsResponse> = {
      throttleTimeMs: 1,
      groups: Array.from({ length: 100 }, (_, i) => ({
        errorCode: 0,
        groupId: `g${i}`,
        groupState: 'Stable',
        protocolType: 'consumer',
        protocolData: 'range',
        members: [
          {
            memberId: `m${i}`,
            groupInstanceId: null,
            clientId: 'c',
            clientHost: '/127.0.0.1',
            memberMetadata: Buffer.alloc(i),
            memberAssignment: Buffer.alloc(3),
          },
        ],
        authorizedOperations: 3,
      })),
    };
    assert.deepEqual(await sliced(DescribeGroupsResponseCodec, res, 'groups', v), whole(DescribeGroupsResponseCodec, res, v), `DescribeGroups v${v}`);
  }
});
