// ScratchFileIO: LocalFileIO's semantics without fsync; its metadata cache follows its own writes.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LsmError } from '../lsm/index.ts';
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
});
