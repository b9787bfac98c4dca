import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CoordinatorRuntime } from '../../../src/coordinator/runtime/runtime.js';
import type { CoordinatorShard, Undo } from '../../../src/coordinator/runtime/types.js';
import { ErrorCode, KafkaError } from '../../../src/protocol/errors.js';
import { MemoryLog } from '../memory-log.js';

/** A counter shard: records are numbers added to a sum. */
class SumShard implements CoordinatorShard<number> {
  sum = 0;
  loadedWith = -1;
  replay(r: number): Undo {
    this.sum += r;
    return () => (this.sum -= r);
  }
  onLoaded(): void {
    this.loadedWith = this.sum;
  }
  onUnloaded(): void {}
}

const serde = {
  encode: (n: number) => ({ key: Buffer.from('k'), value: Buffer.from(String(n)) }),
  decode: (_k: Buffer, v: Buffer | null) => (v === null ? null : Number(v.toString())),
};

function runtime(log: MemoryLog) {
  let shard: SumShard | undefined;
  const rt = new CoordinatorRuntime<SumShard, number>({ log, serde, newShard: () => (shard = new SumShard()) });
  return { rt, shard: () => shard! };
}

const add = (n: number) => (s: SumShard) => ({ records: [n], response: s.sum });

test('requests get NOT_COORDINATOR for unknown partitions and COORDINATOR_LOAD_IN_PROGRESS while loading', async () => {
  const log = new MemoryLog();
  log.partitions.set(0, [serde.encode(5), serde.encode(7)]);
  let releaseLoad!: () => void;
  const gate = new Promise<void>((r) => (releaseLoad = r));
  const slowLog = {
    append: log.append.bind(log),
    replay: async (p: number, on: (k: Buffer, v: Buffer | null) => void) => {
      await gate;
      return log.replay(p, on);
    },
  };
  const rt = new CoordinatorRuntime<SumShard, number>({ log: slowLog, serde, newShard: () => new SumShard() });
  assert.throws(
    () => rt.write(1, add(1)),
    (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.NOT_COORDINATOR,
  );
  const loading = rt.load(0);
  assert.throws(
    () => rt.write(0, add(1)),
    (e: unknown) => e instanceof KafkaError && e.code === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
  );
  releaseLoad();
  await loading;
  assert.equal(await rt.read(0, (s) => s.loadedWith), 12, 'replay went through the same replay() before onLoaded');
});

test('a failed append undoes it and every write queued after it; later writes work again', async () => {
  const log = new MemoryLog();
  const { rt, shard } = runtime(log);
  await rt.load(0);
  await rt.write(0, add(1));
  log.hold = true;
  const w1 = rt.write(0, add(10));
  const w2 = rt.write(0, add(100));
  assert.equal(shard().sum, 111, 'applied at once, before durability');
  log.failNext = 1;
  log.release();
  await assert.rejects(w1);
  await assert.rejects(w2);
  assert.equal(shard().sum, 1);
  assert.equal(await rt.write(0, add(2)), 1);
  assert.equal(shard().sum, 3);
  assert.deepEqual(
    log.partitions.get(0)!.map((r) => r.value!.toString()),
    ['1', '2'],
  );
});

test('reads wait for earlier writes to be durable', async () => {
  const log = new MemoryLog();
  const { rt } = runtime(log);
  await rt.load(0);
  log.hold = true;
  const w = rt.write(0, add(4));
  let readDone = false;
  const r = rt.read(0, (s) => s.sum).then((v) => ((readDone = true), v));
  await new Promise((res) => setImmediate(res));
  assert.equal(readDone, false);
  log.release();
  await w;
  assert.equal(await r, 4);
});
