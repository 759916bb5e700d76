// A string holding a lone surrogate (half of a UTF-16 pair) has no UTF-8 form: every file encodes
// it as U+FFFD. Written, two keys that differed only there became one key on disk — two rows of
// one primary key after a restart, where the run cache no longer held the original strings —
// and any such value read back changed. The writers refuse it, naming the column (after
// `checkValue`, which the ingest paths share and which leaves this to the writers: ingest refuses
// such text in the envelope already).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import type { SchemaSpec } from './schema.ts';
import { loneSurrogateIn, parseType } from './types.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function newCatalog(): { dir: string; catalog: Catalog } {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-surrogate-'));
  dirs.push(dir);
  const catalog = new Catalog(dir);
  catalog.createDatabase('db');
  return { dir, catalog };
}

const PK: SchemaSpec = {
  fields: [
    { name: 'k', type: 'STRING' },
    { name: 'note', type: 'VARCHAR(20)' },
    { name: 'tags', type: 'ARRAY<STRING>' },
    { name: 'attrs', type: 'MAP<STRING, STRING>' },
  ],
  primaryKeys: ['k'],
  options: { bucket: '1' },
};

describe('strings with a lone surrogate', () => {
  it('are refused by the primary-key writer, naming the column, in every string column', () => {
    const { catalog } = newCatalog();
    const w = catalog.createTable({ database: 'db', table: 't' }, PK).newWriter();
    try {
      expect(() => w.writeRecord({ k: 'a\ud800' })).toThrow(/column 'k' \(STRING NOT NULL\): .*lone surrogate/);
      expect(() => w.writeRecord({ k: 'a', note: '\udc00b' })).toThrow(/column 'note' .*lone surrogate/);
      expect(() => w.writeRecord({ k: 'a', tags: ['x', 'y\ud83d'] })).toThrow(/column 'tags' .*element 1: .*lone surrogate/);
      expect(() => w.writeRecord({ k: 'a', attrs: new Map([['\ud83dk', 'v']]) })).toThrow(/column 'attrs' .*map key: .*lone surrogate/);
      expect(() => w.writeRecord({ k: 'a', attrs: new Map([['k', 'v\ude00']]) })).toThrow(/column 'attrs' .*lone surrogate/);
    } finally {
      w.close();
    }
  });

  it('are refused by the append writer', () => {
    const { catalog } = newCatalog();
    const t = catalog.createTable({ database: 'db', table: 'log' }, { fields: [{ name: 'msg', type: 'STRING' }], primaryKeys: [], options: {} });
    const w = t.newWriter();
    try {
      expect(() => w.writeRecord({ msg: 'x\ud800' })).toThrow(/column 'msg' .*lone surrogate/);
    } finally {
      w.close();
    }
  });

  it('leave whole pairs alone: a key with an emoji reads back as written after a restart', () => {
    const { dir, catalog } = newCatalog();
    const t = catalog.createTable({ database: 'db', table: 't' }, PK);
    const w = t.newWriter();
    w.writeRecord({ k: 'a\ud83d\ude00', note: '\ud83d\ude00' });
    w.writeRecord({ k: 'a\ud83d\ude01', note: 'x' });
    w.commit();
    w.close();
    const again = new Catalog(dir).getTable({ database: 'db', table: 't' });
    const r = again.reader();
    try {
      expect([...r.scan()].map((row) => row.slice(0, 2))).toEqual([
        ['a\ud83d\ude00', '\ud83d\ude00'],
        ['a\ud83d\ude01', 'x'],
      ]);
    } finally {
      r.close();
    }
  });

  it('loneSurrogateIn names the position of the first lone surrogate', () => {
    expect(loneSurrogateIn(parseType('STRING'), 'ok\ud83d\ude00')).toBeUndefined();
    expect(loneSurrogateIn(parseType('STRING'), 'ab\udfff')).toMatch(/lone surrogate at index 2 \(U\+DFFF\)/);
    expect(loneSurrogateIn(parseType('CHAR(3)'), '\ud800')).toMatch(/lone surrogate at index 0/);
    expect(loneSurrogateIn(parseType('MAP<INT, ARRAY<STRING>>'), new Map([[1, ['a', '\ud800']]]))).toMatch(/value of map key number 1: element 1: .*index 0/);
  });
});
