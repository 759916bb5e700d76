// `tilstand table create --schema` and a schema file that gives a key twice
// (`"options": {"bucket": "1", "bucket": "4"}`, a field's `type` twice): JSON.parse keeps the last
// value and says nothing, so the table was made with 4 buckets (or the second type). Such a file is
// refused naming the key's path, exit 2, and the warehouse is left as it was. values.ts
// repeatedKeyPath finds the path; a seeded random check compares it with the path of a key
// repeated on purpose in random JSON.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../testing/cli.ts';
import { runTableCli } from './table-cli.ts';
import { repeatedKeyPath } from './values.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-cli-create-dup-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const warehouse = join(dir, 'warehouse');
const table = (args: string[]) => runCli(runTableCli, [...args, '--warehouse', warehouse]);

const FIELDS = '[{"name":"item","type":"STRING"},{"name":"qty","type":"INT"}]';

describe('table create: a key given twice in the schema file', () => {
  it('is refused naming the path of the key, exit 2, and the warehouse is left as it was', async () => {
    const cases: [string, string][] = [
      // Was exit 0: a table of 4 buckets.
      [`{"fields":${FIELDS},"primaryKeys":["item"],"options":{"bucket":"1","bucket":"4"}}`, 'options.bucket'],
      // Was exit 0: qty made a BIGINT.
      ['{"fields":[{"name":"item","type":"STRING"},{"name":"qty","type":"INT","type":"BIGINT"}],"primaryKeys":["item"]}', 'fields[1].type'],
      [`{"fields":${FIELDS},"options":{"bucket":"1"},"primaryKeys":["item"],"options":{"bucket":"2"}}`, 'options'],
      [`{"fields":${FIELDS},"primaryKeys":["item"],"primaryKeys":["qty"]}`, 'primaryKeys'],
      // The same key spelled with an escape is the same key to JSON.
      [`{"fields":${FIELDS},"primaryKeys":["item"],"options":{"buck\\u0065t":"1","bucket":"4"}}`, 'options.bucket'],
      // An option name that is not a plain name is shown as a JSON string.
      [
        `{"fields":${FIELDS},"primaryKeys":["item"],"options":{"merge-engine":"aggregation","fields.qty.aggregate-function":"sum","fields.qty.aggregate-function":"max"}}`,
        'options["fields.qty.aggregate-function"]',
      ],
    ];
    for (const [i, [text, path]] of cases.entries()) {
      const file = join(dir, `twice-${i}.json`);
      writeFileSync(file, `${text}\n`);
      const r = await table(['create', `d${i}.stock`, '--schema', file]);
      expect([r.code, r.out, r.err], text).toEqual([2, '', `tilstand: schema file ${file}: key '${path}' is given twice; expected each key once (JSON would keep only the last)\n`]);
    }
    // Not even the database the table would have gone into is left behind.
    expect(existsSync(warehouse)).toBe(false);
  });

  it('takes a file whose strings look like repeated keys, and the same key in separate objects', async () => {
    const file = join(dir, 'ok.json');
    writeFileSync(
      file,
      JSON.stringify(
        {
          fields: [
            { name: 'item', type: 'STRING', description: '"bucket": "1", "bucket": "4"' },
            { name: 'qty', type: 'INT', description: 'ends in a backslash\\' },
            { name: 'note', type: 'MAP<STRING, INT>', description: '{"name":"x","name":"y"}' },
          ],
          primaryKeys: ['item'],
          options: { bucket: '2', 'fields.qty.default-value': '0' },
          comment: 'options: {"bucket": 3}',
        },
        null,
        2,
      ),
    );
    const r = await table(['create', 'd.ok', '--schema', file]);
    expect([r.code, r.err, r.out]).toEqual([0, '', `${join(warehouse, 'd.db', 'ok')}\n`]);
    const schema = JSON.parse(readFileSync(join(warehouse, 'd.db', 'ok', 'schema', 'schema-0'), 'utf8')) as { options: Record<string, string>; comment: string };
    expect([schema.options.bucket, schema.comment]).toEqual(['2', 'options: {"bucket": 3}']);
  });
});

describe('repeatedKeyPath', () => {
  it('names the key with the path of objects and array elements it is in', () => {
    expect(repeatedKeyPath('{"a":1,"b":2}')).toBeUndefined();
    expect(repeatedKeyPath('{"a":1,"a":2}')).toBe('a');
    expect(repeatedKeyPath('[{"a":1},{"a":1,"a":2}]')).toBe('[1].a');
    expect(repeatedKeyPath('{"a":[[],{},[1,[2,3]],{"b":[{},{"c":1,"d":{"c":2},"c":3}]}]}')).toBe('a[3].b[1].c');
    // An empty object or array before the repeated key does not shift the path.
    expect(repeatedKeyPath('{"x":{},"y":[],"z":{"q":[],"w":{},"q":1}}')).toBe('z.q');
    expect(repeatedKeyPath('{"a b":{"":1,"":2}}')).toBe('["a b"][""]');
    expect(repeatedKeyPath('{"k":"\\"k\\":1","k\\\\":2,"k\\u005c":3}')).toBe('["k\\\\"]');
  });

  it('finds a key repeated on purpose in random JSON, at its path, and nothing in the JSON without it (seeded)', () => {
    const seed = Number(process.env.CREATE_DUPLICATE_KEYS_SEED ?? Date.now() % 2 ** 31);
    console.log(`table-cli-create-duplicate-keys: seed ${seed} (CREATE_DUPLICATE_KEYS_SEED=${seed} repeats it)`);
    let state = seed >>> 0;
    const next = (): number => {
      // mulberry32
      state = (state + 0x6d2b79f5) >>> 0;
      let t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
    const KEY_PARTS = ['a', 'b', 'bucket', '"', '\\', ',', ':', '{', '}', '[', ']', '.', ' ', 'é', '\u0001'];
    const randomString = (): string => Array.from({ length: Math.floor(next() * 4) }, () => pick(KEY_PARTS)).join('');
    // A random value. Objects are written as a placeholder and listed with their path and entries,
    // so a key can be repeated in one of them before the text is put together.
    type Obj = { keys: string[]; path: (string | number)[]; entries: string[] };
    const value = (depth: number, path: (string | number)[], objects: Obj[]): string => {
      const r = next();
      if (depth > 3 || r < 0.3) return pick(['1', '-2.5e3', 'true', 'null', JSON.stringify(randomString())]);
      if (r < 0.6) return `[${Array.from({ length: Math.floor(next() * 4) }, (_, i) => value(depth + 1, [...path, i], objects)).join(',')}]`;
      const obj: Obj = { keys: [...new Set(Array.from({ length: Math.floor(next() * 4) }, randomString))], path, entries: [] };
      objects.push(obj);
      const at = objects.length - 1;
      obj.entries = obj.keys.map((k) => `${JSON.stringify(k)}:${value(depth + 1, [...path, k], objects)}`);
      return `\u0000${at}\u0000`;
    };
    const render = (objects: Obj[], at: number): string =>
      `{${objects[at]!.entries.join(',').replace(/\u0000(\d+)\u0000/g, (_, n: string) => render(objects, Number(n)))}}`;
    const pathText = (path: (string | number)[]): string =>
      path.map((p, d) => (typeof p === 'number' ? `[${p}]` : /^[A-Za-z_][A-Za-z0-9_-]*$/.test(p) ? (d === 0 ? p : `.${p}`) : `[${JSON.stringify(p)}]`)).join('');
    const deadline = Date.now() + 10_000;
    let repeated = 0;
    for (let round = 0; round < 2000 && Date.now() < deadline; round++) {
      const top: Obj = { keys: ['fields', 'options', 'x y'], path: [], entries: [] };
      const objects: Obj[] = [top];
      top.entries = top.keys.map((k) => `${JSON.stringify(k)}:${value(1, [k], objects)}`);
      const clean = render(objects, 0);
      expect(() => JSON.parse(clean), clean).not.toThrow();
      expect(repeatedKeyPath(clean), `seed ${seed} round ${round}: ${clean}`).toBeUndefined();
      // Keys within an object are distinct, so the key repeated here is the only one.
      const target = pick(objects.filter((o) => o.keys.length > 0));
      const key = pick(target.keys);
      target.entries.splice(Math.floor(next() * (target.entries.length + 1)), 0, `${JSON.stringify(key)}:${pick(['0', '"v"', '[]', '{}'])}`);
      const twice = render(objects, 0);
      expect(() => JSON.parse(twice), twice).not.toThrow();
      expect(repeatedKeyPath(twice), `seed ${seed} round ${round}: ${twice}`).toBe(pathText([...target.path, key]));
      repeated++;
    }
    expect(repeated).toBeGreaterThan(50);
  });
});
