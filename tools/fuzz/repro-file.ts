/** The fuzzer's repro files: the inputs that preceded a crash or a failed probe, replayable. */

/** Repro files hold inputs as [uint32 length][bytes] (an input may itself be a partial frame). */
export function envelope(input: Buffer): Buffer {
  const b = Buffer.allocUnsafe(4 + input.length);
  b.writeUInt32BE(input.length, 0);
  input.copy(b, 4);
  return b;
}

export function readEnvelopes(file: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let p = 0; p + 4 <= file.length; ) {
    const n = file.readUInt32BE(p);
    out.push(file.subarray(p + 4, p + 4 + n));
    p += 4 + n;
  }
  return out;
}
