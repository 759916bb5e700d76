// A small seeded random generator (mulberry32) so a demo run is the same for the same seed.

export class Rng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** The generator's whole state: `new Rng(r.saved)` goes on where `r` stands. */
  get saved(): number {
    return this.state;
  }

  restore(state: number): void {
    this.state = state >>> 0;
  }

  /** A float in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  pick<T>(list: readonly T[]): T {
    if (list.length === 0) throw new RangeError('pick from an empty list');
    return list[Math.floor(this.next() * list.length)]!;
  }

  chance(p: number): boolean {
    return this.next() < p;
  }
}

/** A per-module seed derived from the run's seed, so modules do not move in lockstep. */
export function subSeed(seed: number, name: string): number {
  let h = seed >>> 0;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}
