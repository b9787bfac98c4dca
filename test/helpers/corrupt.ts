/** Corrupting a stored or encoded byte on purpose, as the checksum tests do. */

/** XORs the byte at `pos` with `mask` in place; a position outside the buffer throws a RangeError. */
export function flipByte(buf: Buffer, pos: number, mask = 0xff): void {
  buf.writeUInt8(buf.readUInt8(pos) ^ mask, pos);
}
