/**
 * Producer ids in cluster mode, as Kafka's ZkProducerIdManager: each broker takes blocks of
 * 1,000 ids from `/latest_producer_id_block` (a conditional read-modify-write, so no two brokers
 * ever own the same block) and hands them out in order. A broker's file-based block (embedded
 * mode's ProducerIdManager) would let two brokers give the same id to different producers.
 */

export interface ProducerIdSource {
  generate(): Promise<bigint>;
}

export interface ProducerIdBlockAllocator {
  allocateProducerIdBlock(brokerId: number, blockSize: number): Promise<{ start: bigint; end: bigint }>;
}

export const ZK_PRODUCER_ID_BLOCK_SIZE = 1000;

export class ZkProducerIdBlocks implements ProducerIdSource {
  private next = 0n;
  private end = -1n; // inclusive; none yet
  private pending: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly zk: ProducerIdBlockAllocator,
    private readonly brokerId: number,
    private readonly blockSize = ZK_PRODUCER_ID_BLOCK_SIZE,
  ) {}

  generate(): Promise<bigint> {
    const run = async (): Promise<bigint> => {
      if (this.next > this.end) {
        const block = await this.zk.allocateProducerIdBlock(this.brokerId, this.blockSize);
        this.next = block.start;
        this.end = block.end;
      }
      return this.next++;
    };
    const result = this.pending.then(run, run);
    this.pending = result.catch(() => undefined);
    return result;
  }
}
