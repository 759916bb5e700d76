// LettersBySeq: every letter of a stream and seq, handed out together; the payload-checked ones
// bounded, the oldest of them forgotten whatever its stream; the others never forgotten for the bound.
import { describe, expect, it } from 'vitest';
import { LettersBySeq } from './letters-by-seq.ts';

const far = (key: string, seq: number, position: number) => ({ key, seq, position: BigInt(position), samePayload: true });
const dropped = (key: string, seq: number, position: number) => ({ key, seq, position: BigInt(position), samePayload: false });

describe('LettersBySeq', () => {
  it('hands a letter out once, by stream and seq', () => {
    const l = new LettersBySeq(4);
    l.add(far('a/s', 5, 10));
    expect(l.take('a/s', 6)).toEqual([]);
    expect(l.take('b/s', 5)).toEqual([]);
    expect(l.take('a/s', 5)).toEqual([far('a/s', 5, 10)]);
    expect(l.take('a/s', 5)).toEqual([]);
  });

  it('past the bound forgets the oldest payload-checked letter of any stream, not the first stream\'s', () => {
    const l = new LettersBySeq(3);
    l.add(far('a/s', 1, 1));
    l.add(far('b/s', 1, 2));
    l.add(far('a/s', 2, 3)); // a/s stays the first stream in the map
    expect(l.take('a/s', 1).map((x) => x.position)).toEqual([1n]);
    l.add(far('b/s', 2, 4));
    l.add(far('b/s', 3, 5)); // four: b/s seq 1 (the oldest) goes
    expect(l.take('b/s', 1)).toEqual([]);
    expect([l.take('a/s', 2), l.take('b/s', 2), l.take('b/s', 3)].map((x) => x.map((y) => y.position))).toEqual([[3n], [4n], [5n]]);
  });

  it('the letters closed by the seq alone neither count toward the bound nor are forgotten for it', () => {
    const l = new LettersBySeq(2);
    for (let s = 1; s <= 100; s++) l.add(dropped('a/s', s, s));
    l.add(far('a/s', 200, 200));
    l.add(far('a/s', 201, 201));
    l.add(far('a/s', 202, 202)); // 200 goes, no dropped one
    expect(l.take('a/s', 200)).toEqual([]);
    for (let s = 1; s <= 100; s++) expect(l.take('a/s', s).map((x) => x.position)).toEqual([BigInt(s)]);
    expect([...l.take('a/s', 201), ...l.take('a/s', 202)].map((x) => x.samePayload)).toEqual([true, true]);
  });

  it('letters of the same stream and seq are kept side by side and handed out together, oldest first', () => {
    const l = new LettersBySeq(4);
    l.add(dropped('a/s', 50, 1)); // open at the start, its held event dropped
    l.add(far('a/s', 50, 2)); // its resend given up as far
    l.add(far('a/s', 50, 3)); // and again
    expect(l.take('a/s', 50)).toEqual([dropped('a/s', 50, 1), far('a/s', 50, 2), far('a/s', 50, 3)]);
    expect(l.take('a/s', 50)).toEqual([]);
  });

  it('past the bound the oldest payload-checked letter of a seq goes, its other letters stay', () => {
    const l = new LettersBySeq(2);
    l.add(dropped('a/s', 7, 1));
    l.add(far('a/s', 7, 2));
    l.add(far('a/s', 7, 3));
    l.add(far('a/s', 8, 4)); // three payload-checked: 7 at 2 goes
    expect(l.take('a/s', 7)).toEqual([dropped('a/s', 7, 1), far('a/s', 7, 3)]);
    expect(l.take('a/s', 8)).toEqual([far('a/s', 8, 4)]);
  });

  it('a letter added again at its position is kept once, counted once', () => {
    const l = new LettersBySeq(2);
    l.add(far('a/s', 7, 1));
    l.add(far('a/s', 7, 1));
    l.add(far('a/s', 8, 2)); // two kept: the first is not forgotten
    expect(l.take('a/s', 7)).toEqual([far('a/s', 7, 1)]);
    l.add(dropped('a/s', 9, 3));
    l.add(far('a/s', 9, 3)); // the newest word on the letter at 3
    expect(l.take('a/s', 9)).toEqual([far('a/s', 9, 3)]);
    expect(l.take('a/s', 8)).toEqual([far('a/s', 8, 2)]);
  });
});
