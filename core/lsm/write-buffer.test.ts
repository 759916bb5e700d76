// WriteBuffer.drain's key order: the two-level sort (distinct first strings natively, then the
// second column per first value) must give exactly the order of sorting every key by the table's
// comparators, and the generic sort must take over when a first value holds a unit ≥ U+D800.
import { describe, expect, it } from 'vitest';
import type { KeyValue } from './key-value.ts';
import type { MergeFunction } from './merge/merge-function.ts';
import { mulberry32 } from './testing/prng.ts';
import { comparatorFor, parseType, type DataType } from './types.ts';
import { WriteBuffer } from './write-buffer.ts';

/** Last record wins (enough to exercise the buffer's slots and order). */
function lastWins(): MergeFunction {
  let last: KeyValue | undefined;
  return {
    reset: () => (last = undefined),
    add: (kv) => (last = kv),
    result: () => last,
  };
}

const FIRSTS = ['', 'a', 'a\u0000', 'a\u0001', 'ab', 'b', 'B', 'ITEM-0000418', 'ITEM-00004180', '~', '\u00e9', '\u07ff', '\u0800', 'z\ud7ff'];
const HIGH = ['\ud83d\ude00', '\uffff', '\ue000x', 'a\ud800'];

function drainOrder(keyTypes: DataType[], keys: unknown[][]): unknown[][] {
  const wb = new WriteBuffer([0, 1], keyTypes, lastWins(), false, undefined);
  let seq = 0;
  for (const k of keys) expect(wb.add([k[0], k[1], seq], seq++, 0)).toBe(true);
  const run = wb.drain(3, () => 0)!;
  const out: unknown[][] = [];
  for (let j = 0; j < run.rowCount; j++) out.push([run.keyCols[0]![j], run.keyCols[1]![j]]);
  return out;
}

function expected(keyTypes: DataType[], keys: unknown[][]): unknown[][] {
  const c0 = comparatorFor(keyTypes[0]!);
  const c1 = comparatorFor(keyTypes[1]!);
  const seen = new Map<string, unknown[]>();
  for (const k of keys) seen.set(JSON.stringify([String(k[0]), typeof k[1], String(k[1]), Object.is(k[1], -0)]), k);
  return [...seen.values()].sort((x, y) => c0(x[0], y[0]) || c1(x[1], y[1]));
}

describe('WriteBuffer drain order', () => {
  for (const second of ['STRING', 'INT', 'DOUBLE'] as const) {
    for (const high of [false, true]) {
      it(`two string/${second} key columns${high ? ', with first values ≥ U+D800 (generic sort)' : ''}`, () => {
        const seed = Number(process.env.WRITE_BUFFER_SEED ?? (Date.now() ^ (second.length << 8) ^ (high ? 1 : 0)) >>> 0);
        console.log(`write-buffer drain order ${second}${high ? ' high' : ''}: seed ${seed} (WRITE_BUFFER_SEED=${seed} to replay)`);
        const rnd = mulberry32(seed);
        const firsts = high ? [...FIRSTS, ...HIGH] : FIRSTS;
        const seconds: unknown[] =
          second === 'STRING' ? ['', 'LOC-00', 'LOC-01', 'LOC-1', 'loc', '\u00e9', 'z'] : second === 'INT' ? [-5, -1, 0, 1, 2, 7, 1000] : [-1.5, -0, 0, 0.25, 3, Infinity, -Infinity];
        // Every other first value also takes 40 more second values: heads past the insertion sort
        // (more than 16 keys), beside heads of a few keys.
        const more = [...seconds];
        for (let x = 0; x < 40; x++) more.push(second === 'STRING' ? `many-${(x * 7919) % 40}` : second === 'INT' ? 2000 + ((x * 7919) % 40) : 0.5 + ((x * 7919) % 40));
        const types = [parseType('STRING NOT NULL'), parseType(`${second} NOT NULL`)];
        const keys: unknown[][] = [];
        for (let i = 0; i < 900; i++) {
          const f = Math.floor(rnd() * firsts.length);
          const pool = f % 2 === 0 ? seconds : more;
          keys.push([firsts[f]!, pool[Math.floor(rnd() * pool.length)]!]);
        }
        const got = drainOrder(types, keys);
        const want = expected(types, keys);
        expect(got.length, `seed ${seed}`).toBe(want.length);
        for (let j = 0; j < want.length; j++) {
          expect(Object.is(got[j]![0], want[j]![0]) && Object.is(got[j]![1], want[j]![1]), `seed ${seed}: key ${j} is ${JSON.stringify(got[j])}, expected ${JSON.stringify(want[j])}`).toBe(true);
        }
      });
    }
  }
});
