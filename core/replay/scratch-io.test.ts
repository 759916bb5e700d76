// ScratchFileIO: LocalFileIO's semantics without fsync; its metadata cache follows its own writes.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Catalog, LsmError } from '../lsm/index.ts';
import { RACY_MS } from '../lsm/file-identity.ts';
import { ScratchFileIO } from './scratch-io.ts';

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('ScratchFileIO', () => {
  it('keeps LocalFileIO’s rules: writeNew and createAtomic never overwrite, replaceAtomic does', () => {
    dir = mkdtempSync(join(tmpdir(), 'tilstand-scratch-io-'));
    const io = new ScratchFileIO();
    const f = join(dir, 'manifest', 'manifest-1');
    io.mkdirs(join(dir, 'manifest'));
    io.writeNew(f, Buffer.from('a'));
    expect(() => io.writeNew(f, Buffer.from('b'))).toThrow(LsmError);
    expect(io.readFile(f).toString()).toBe('a');
    const t = join(dir, 'tag', 'tag-x');
    expect(io.createAtomic(t, Buffer.from('1'))).toBe(true);
    expect(io.createAtomic(t, Buffer.from('2'))).toBe(false);
    expect(io.readFile(t).toString()).toBe('1');
    const hint = join(dir, 'snapshot', 'LATEST');
    io.replaceAtomic(hint, Buffer.from('1'));
    io.replaceAtomic(hint, Buffer.from('2'));
    expect(io.readFile(hint).toString()).toBe('2');
  });

  it('its cached bytes and listings follow creates and removes', () => {
    dir = mkdtempSync(join(tmpdir(), 'tilstand-scratch-io-'));
    const io = new ScratchFileIO();
    const tagDir = join(dir, 'tag');
    expect(io.list(tagDir)).toEqual([]);
    io.mkdirs(tagDir);
    expect(io.list(tagDir)).toEqual([]);
    expect(io.createAtomic(join(tagDir, 'tag-a'), Buffer.from('A'))).toBe(true);
    expect(io.list(tagDir)).toEqual(['tag-a']);
    writeFileSync(join(tagDir, 'tag-b'), 'B'); // (not through the FileIO: only to show what is cached)
    expect(io.list(tagDir)).toEqual(['tag-a']); // the listing is kept…
    expect(io.createAtomic(join(tagDir, 'tag-c'), Buffer.from('C'))).toBe(true);
    expect(io.list(tagDir).sort()).toEqual(['tag-a', 'tag-b', 'tag-c']); // …until this FileIO changes the folder
    const got = io.readFileIfExists(join(tagDir, 'tag-a'))!;
    got[0] = 0x5a; // callers get a copy
    expect(io.readFile(join(tagDir, 'tag-a')).toString()).toBe('A');
    io.remove(join(tagDir, 'tag-a'));
    expect(io.exists(join(tagDir, 'tag-a'))).toBe(false);
    expect(io.readFileIfExists(join(tagDir, 'tag-a'))).toBeUndefined();
    expect(io.list(tagDir).sort()).toEqual(['tag-b', 'tag-c']);
    io.removeDir(tagDir);
    expect(io.list(tagDir)).toEqual([]);
    expect(io.exists(join(tagDir, 'tag-c'))).toBe(false);
  });

  it('stat: a kept folder’s identity changes exactly when this FileIO changes the folder, and is never racy; kept files keep their real identity', () => {
    dir = mkdtempSync(join(tmpdir(), 'tilstand-scratch-io-'));
    const io = new ScratchFileIO();
    const tagDir = join(dir, 'tag');
    expect(io.stat(tagDir)).toBeUndefined();
    io.mkdirs(tagDir);
    const v1 = io.stat(tagDir)!;
    expect(v1.mtimeMs + RACY_MS).toBeLessThanOrEqual(Date.now()); // just created, yet not "modified just now"
    io.mkdirs(join(dir, 'bucket-0')); // elsewhere: no change
    expect(io.stat(tagDir)).toEqual(v1);
    expect(io.createAtomic(join(tagDir, 'tag-a'), Buffer.from('A'))).toBe(true);
    const v2 = io.stat(tagDir)!;
    expect(v2).not.toEqual(v1);
    expect(io.createAtomic(join(tagDir, 'tag-a'), Buffer.from('B'))).toBe(false);
    const a = io.stat(join(tagDir, 'tag-a'))!;
    expect(a.size).toBe(1);
    expect(a.ino).toBeGreaterThan(0); // the real stat
    io.remove(join(tagDir, 'tag-a'));
    const v3 = io.stat(tagDir)!;
    expect([v1, v2]).not.toContainEqual(v3);
    expect(io.stat(join(tagDir, 'tag-a'))).toBeUndefined();
    io.writeNew(join(tagDir, 'tag-a'), Buffer.from('AB'));
    expect(io.stat(tagDir)).not.toEqual(v3);
    expect(io.stat(join(tagDir, 'tag-a'))!.size).toBe(2);
    io.removeDir(tagDir);
    expect(io.stat(tagDir)).toBeUndefined();
  });

  it('a table on it lists its tags as they are made and removed (the tag cache follows the folder versions)', () => {
    dir = mkdtempSync(join(tmpdir(), 'tilstand-scratch-io-'));
    const catalog = new Catalog(join(dir, 'warehouse'), { fileIO: new ScratchFileIO() });
    catalog.createDatabase('d');
    const t = catalog.createTable({ database: 'd', table: 't' }, { fields: [{ name: 'k', type: 'STRING NOT NULL' }], primaryKeys: ['k'], options: { bucket: '1' } });
    const w = t.newWriter();
    const names = () => t.listTags().map((x) => x.name);
    for (let i = 0; i < 5; i++) {
      w.writeRecord({ k: `k${i}` });
      const id = w.commit().snapshotId!;
      expect(names()).toEqual(Array.from({ length: i }, (_, j) => `t${j}`));
      t.createTag(`t${i}`, id);
      expect(names()).toEqual(Array.from({ length: i + 1 }, (_, j) => `t${j}`));
    }
    t.deleteTag('t2');
    expect(names()).toEqual(['t0', 't1', 't3', 't4']);
    w.close();
  });
});
