// A token bucket for the optional bandwidth cap (bytes per second, burst of one second), and the
// stream that spends from it while counting progress. One bucket per engine: the cap holds across
// files, not per file.

import { Transform, type TransformCallback } from 'node:stream';

export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    readonly bytesPerSecond: number,
    private readonly now: () => number = () => performance.now(),
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
  ) {
    if (!(bytesPerSecond > 0)) throw new RangeError(`bandwidth cap must be > 0 bytes/s, got ${bytesPerSecond}`);
    this.tokens = bytesPerSecond;
    this.last = now();
  }

  private refill(): void {
    const t = this.now();
    this.tokens = Math.min(this.bytesPerSecond, this.tokens + ((t - this.last) / 1000) * this.bytesPerSecond);
    this.last = t;
  }

  /** Waits until `n` bytes may go (in slices no larger than the burst). */
  async take(n: number): Promise<void> {
    let left = n;
    while (left > 0) {
      this.refill();
      const want = Math.min(left, this.bytesPerSecond);
      if (this.tokens >= want) {
        this.tokens -= want;
        left -= want;
        continue;
      }
      await this.sleep(Math.max(1, ((want - this.tokens) / this.bytesPerSecond) * 1000));
    }
  }
}

/** Passes bytes through, waiting on the bucket (when given) and reporting the running total. */
export class MeteredStream extends Transform {
  private total = 0;
  constructor(
    private readonly bucket: TokenBucket | undefined,
    private readonly onBytes: (total: number) => void,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    const go = () => {
      this.total += chunk.length;
      this.onBytes(this.total);
      done(null, chunk);
    };
    if (!this.bucket) return go();
    this.bucket.take(chunk.length).then(go, done);
  }
}
