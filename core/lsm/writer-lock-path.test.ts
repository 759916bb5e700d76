// The writer lock of one table named by two spellings of its path in one process (relative and
// absolute, or through a symbolic link): still one writer. The lock judges a record naming this
// process's own pid as stale (an earlier process with the same pid) unless this process holds
// that lock, so what it holds must be known by the file, not by the string it was given.

import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import { LsmError } from './errors.ts';
import { Table } from './table.ts';
import { WriterLock } from './writer-lock.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'writer-lock-path-'));
  dirs.push(d);
  return d;
}

function kindOf(f: () => unknown): string {
  try {
    f();
    return 'acquired';
  } catch (e) {
    return e instanceof LsmError ? `${e.kind}: ${e.message}` : String(e);
  }
}

describe('one writer lock, two spellings of its path in one process', () => {
  it('a relative and an absolute path to the same lock: the second gives Conflict and leaves the first holder its lock', () => {
    const dir = tempDir();
    const abs = join(dir, '.writer.lock');
    const rel = relative(process.cwd(), abs);
    expect(rel).not.toBe(abs);
    const first = WriterLock.acquire(abs, 'table t');
    const token = JSON.parse(readFileSync(abs, 'utf8')).token as string;
    expect(kindOf(() => WriterLock.acquire(rel, 'table t'))).toMatch(/^Conflict: table t already has a writer in this process/);
    // The first holder's record is still the lock (it was not taken over as an earlier process's).
    expect(JSON.parse(readFileSync(abs, 'utf8')).token).toBe(token);
    first.release();
    // Released under one spelling, it is free under the other.
    WriterLock.acquire(rel, 'table t').release();
  });

  it('a directory reached through a symbolic link: the second gives Conflict', () => {
    const dir = tempDir();
    mkdirSync(join(dir, 'real'));
    symlinkSync(join(dir, 'real'), join(dir, 'link'));
    const first = WriterLock.acquire(join(dir, 'real', '.writer.lock'), 'table t');
    expect(kindOf(() => WriterLock.acquire(join(dir, 'link', '.writer.lock'), 'table t'))).toMatch(/^Conflict: table t already has a writer in this process/);
    first.release();
  });

  it('two Table objects of one table, opened by a relative and an absolute path: the second writer is refused', () => {
    const dir = tempDir();
    const catalog = new Catalog(join(dir, 'wh'));
    catalog.createDatabase('db');
    const t = catalog.createTable({ database: 'db', table: 't' }, { fields: [{ name: 'k', type: 'INT' }, { name: 'v', type: 'INT' }], primaryKeys: ['k'] });
    const abs = t.paths.root;
    const a = Table.open(abs).newWriter();
    try {
      expect(kindOf(() => Table.open(relative(process.cwd(), abs)).newWriter())).toMatch(/^Conflict: /);
    } finally {
      a.close();
    }
  });
});
