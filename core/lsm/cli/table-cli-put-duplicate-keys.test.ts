// `tilstand table put` and a line that gives a column twice (`{"item":"a","qty":1,"qty":2}`):
// JSON.parse keeps the last value and says nothing, so the row was written with qty 2. Such a line
// is refused naming the line and the column, exit 2, nothing committed — also for a key given
// twice inside a MAP column's object, and for a key spelled with escapes. Lines whose strings hold
// quotes, backslashes, braces and commas are still taken as they are (a seeded random check).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../testing/cli.ts';
import { runTableCli } from './table-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-cli-put-dup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const W = ['--warehouse', join(dir, 'warehouse')];
const table = (args: string[], stdin = '') => runCli(runTableCli, [...args, ...W], stdin);

beforeAll(async () => {
  const schema = join(dir, 'stock.json');
  writeFileSync(
    schema,
    JSON.stringify({
      fields: [
        { name: 'item', type: 'STRING' },
        { name: 'qty', type: 'INT' },
        { name: 'note', type: 'STRING' },
        { name: 'attrs', type: 'MAP<STRING, INT>' },
        { name: 'tags', type: 'ARRAY<STRING>' },
      ],
      primaryKeys: ['item'],
      options: { bucket: '1' },
    }),
  );
  expect(await table(['create', 'd.stock', '--schema', schema])).toMatchObject({ code: 0, err: '' });
  expect((await table(['put', 'd.stock'], '{"item":"A1","qty":5}\n')).out).toBe('{"snapshot":1,"rows":1}\n');
});

describe('table put: a key given twice in a line', () => {
  it('is refused naming the line and the column, exit 2, and nothing is committed', async () => {
    const cases: [string, string][] = [
      // Was {"snapshot":2,"rows":3}, A2 written with qty 2.
      ['{"item":"A2","qty":1,"qty":2}', "column 'qty' is given twice; expected each column once (JSON would keep only the last)"],
      // The same key spelled with an escape is the same column to JSON.
      ['{"item":"A2","q\\u0074y":1,"qty":2}', "column 'qty' is given twice; expected each column once (JSON would keep only the last)"],
      ['{"_kind":"+I","item":"A2","_kind":"-D"}', "column '_kind' is given twice; expected each column once (JSON would keep only the last)"],
      // Inside a MAP column's object: the map would keep one of the two.
      ['{"item":"A2","attrs":{"w":1,"h":2,"w":3}}', "column 'attrs': key 'w' is given twice; expected each key once (JSON would keep only the last)"],
    ];
    for (const [line, message] of cases) {
      const r = await table(['put', 'd.stock'], `{"item":"B1","qty":1}\n${line}\n{"item":"B2","qty":2}\n`);
      expect([r.code, r.out, r.err], line).toEqual([2, '', `tilstand: line 2: ${message}\n`]);
    }
    const snapshots = await table(['snapshots', 'd.stock', '--json']);
    expect((JSON.parse(snapshots.out) as { id: number }[]).map((s) => s.id)).toEqual([1]);
    expect((await table(['scan', 'd.stock'])).out).toBe('{"item":"A1","qty":5,"note":null,"attrs":null,"tags":null}\n');
  });

  it('takes lines whose strings look like keys, and the same key in separate objects', async () => {
    const lines = [
      // A value that reads as `,"qty":` and a key of an inner object equal to a column's name.
      { item: 'C1', note: '","qty":2,"', attrs: { qty: 1, note: 2 } },
      { item: 'C2\\', note: 'ends in a backslash\\', tags: ['qty', 'qty', '{"qty":1}'] },
      { item: 'C3', attrs: { a: 1 }, tags: ['a', '\\"a\\"'] },
    ];
    const r = await table(['put', 'd.stock'], lines.map((l) => JSON.stringify(l)).join('\n'));
    expect([r.code, r.err, r.out]).toEqual([0, '', '{"snapshot":2,"rows":3}\n']);
  });

  it('accepts every line of random rows whose strings hold quotes, backslashes, braces and commas (seeded)', async () => {
    const seed = Number(process.env.PUT_DUPLICATE_KEYS_SEED ?? Date.now() % 2 ** 31);
    console.log(`table-cli-put-duplicate-keys: seed ${seed} (PUT_DUPLICATE_KEYS_SEED=${seed} repeats it)`);
    let state = seed >>> 0;
    const next = (): number => {
      // mulberry32
      state = (state + 0x6d2b79f5) >>> 0;
      let t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const alphabet = ['"', '\\', '{', '}', '[', ']', ',', ':', 'q', 't', 'y', 'é', '\u0000', '\n', '\u2028', ' ', '😀'];
    const text = (max: number): string => Array.from({ length: Math.floor(next() * max) }, () => alphabet[Math.floor(next() * alphabet.length)]).join('');
    const rows: Record<string, unknown>[] = [];
    const started = Date.now();
    for (let i = 0; i < 2000 && Date.now() - started < 10_000; i++) {
      const attrs: Record<string, number> = {};
      for (let k = Math.floor(next() * 4); k > 0; k--) attrs[text(6)] = k;
      rows.push({ item: `R${i}:${text(8)}`, note: text(12), attrs, tags: [text(5), text(5)] });
    }
    const r = await table(['put', 'd.stock'], rows.map((x) => JSON.stringify(x)).join('\n'));
    expect([r.code, r.err], `seed ${seed}`).toEqual([0, '']);
    expect(JSON.parse(r.out).rows, `seed ${seed}`).toBe(rows.length);
  }, 60_000);
});
