/**
 * Reads a whole (small) file with the fewest thread-pool round trips: open, reads until a short
 * one, close. A broker loading 10,000 logs reads tens of thousands of index, checkpoint and
 * snapshot files of a few bytes each; fs/promises' readFile adds an fstat and a FileHandle with
 * its promises to every one (about 2 of the 7 s of CPU such a start-up took).
 */
import { close, constants, open, read } from 'node:fs';

/** First read's size: most of these files are a few bytes (pooled, so nothing big is allocated per file). */
const FIRST_READ_BYTES = 1024;

/**
 * The file's bytes; rejects with the fs error (its `code`, e.g. ENOENT, kept). The buffer may be
 * a slice of a larger or shared one: copy it to keep it long.
 */
export function readWholeFile(file: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    open(file, constants.O_RDONLY, (openErr, fd) => {
      if (openErr) return reject(openErr);
      let buf = Buffer.allocUnsafe(FIRST_READ_BYTES);
      let length = 0;
      const finish = (err: NodeJS.ErrnoException | null): void =>
        close(fd, (closeErr) => {
          const failure = err ?? closeErr;
          if (failure) reject(failure);
          else resolve(buf.subarray(0, length));
        });
      const readMore = (): void => {
        if (length === buf.length) {
          const grown = Buffer.allocUnsafe(buf.length * 2);
          buf.copy(grown, 0, 0, length);
          buf = grown;
        }
        const wanted = buf.length - length;
        read(fd, buf, length, wanted, length, (err, n) => {
          if (err) return finish(err);
          length += n;
          // A regular file reads short only at its end.
          if (n < wanted) return finish(null);
          readMore();
        });
      };
      readMore();
    });
  });
}
