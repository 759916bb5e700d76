// LettersBySeq: one letter per stream and seq; the payload-checked ones bounded, the oldest of
// them forgotten whatever its stream; the others never forgotten for the bound.
import { describe, expect, it } from 'vitest';
import { LettersBySeq } from './letters-by-seq.ts';

const far = (key: string, seq: number, position: number) => ({ key, seq, position: BigInt(position), samePayload: true });
const dropped = (key: string, seq: number, position: number) => ({ key, seq, position: BigInt(position), samePayload: false });

describe('LettersBySeq', () => {
  it('hands a letter out once, by stream and seq', () => {
    const l = new LettersBySeq(4);
    l.add(far('a/s', 5, 10));
    expect(l.take('a/s', 6)).toBeUndefined();
    expect(l.take('b/s', 5)).toBeUndefined();
    expect(l.take('a/s', 5)).toEqual(far('a/s', 5, 10));
    expect(l.take('a/s', 5)).toBeUndefined();
  });

  it('past the bound forgets the oldest payload-checked letter of any stream, not the first stream\'s', () => {
    const l = new LettersBySeq(3);
    l.add(far('a/s', 1, 1));
    l.add(far('b/s', 1, 2));
    l.add(far('a/s', 2, 3)); // a/s stays the first stream in the map
    expect(l.take('a/s', 1)?.position).toBe(1n);
    l.add(far('b/s', 2, 4));
    l.add(far('b/s', 3, 5)); // four: b/s seq 1 (the oldest) goes
    expect(l.take('b/s', 1)).toBeUndefined();
    expect([l.take('a/s', 2), l.take('b/s', 2), l.take('b/s', 3)].map((x) => x?.position)).toEqual([3n, 4n, 5n]);
  });

  it('the letters closed by the seq alone neither count toward the bound nor are forgotten for it', () => {
    const l = new LettersBySeq(2);
    for (let s = 1; s <= 100; s++) l.add(dropped('a/s', s, s));
    l.add(far('a/s', 200, 200));
    l.add(far('a/s', 201, 201));
    l.add(far('a/s', 202, 202)); // 200 goes, no dropped one
    expect(l.take('a/s', 200)).toBeUndefined();
    for (let s = 1; s <= 100; s++) expect(l.take('a/s', s)?.position).toBe(BigInt(s));
    expect([l.take('a/s', 201), l.take('a/s', 202)].map((x) => x?.samePayload)).toEqual([true, true]);
  });

  it('a second letter of the same stream and seq takes the place of the first, and counts once', () => {
    const l = new LettersBySeq(2);
    l.add(far('a/s', 7, 1));
    l.add(far('a/s', 7, 2));
    l.add(far('a/s', 8, 3)); // two kept: 7 at 2, 8 at 3
    expect(l.take('a/s', 7)?.position).toBe(2n);
    l.add(dropped('a/s', 9, 4));
    l.add(far('a/s', 9, 5));
    expect(l.take('a/s', 9)).toEqual(far('a/s', 9, 5));
    expect(l.take('a/s', 8)?.position).toBe(3n);
  });
});
