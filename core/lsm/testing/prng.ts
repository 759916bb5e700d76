// mulberry32: the small seeded generator (uniform in [0, 1)) of the seeded tests, the reliability
// suites and the benchmark's workload. No imports, so a benchmark child can load it without vitest.

export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
