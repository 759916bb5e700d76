// A tag created while an expiration runs elsewhere (the CLI tagging a snapshot while the site's
// writer commits and expires; another process in real life, a hooked FileIO here that runs the
// writer's expiration between the tagger's read of the snapshot and its write of the tag file).
// Expiration unlinks the snapshot files first and lists the tags after that (expire.ts), so a tag
// written before that listing is marked; one written after it must not survive the files it names.

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LsmError } from './errors.ts';
import { ForwardingFileIO } from './file-io.ts';
import { TableSchema } from './schema.ts';
import { Table } from './table.ts';
import { RENEW_MARGIN_MS } from './tags.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Runs `hook` once, just before the first tag file is created. */
class TagHookIO extends ForwardingFileIO {
  hook: (() => void) | undefined;
  override createAtomic(path: string, data: Uint8Array): boolean {
    const h = this.hook;
    if (h !== undefined && /\/tag\/tag-[^/]+$/.test(path)) {
      this.hook = undefined;
      h();
    }
    return super.createAtomic(path, data);
  }
}

function setup(options: Record<string, string>) {
  const dir = join(mkdtempSync(join(tmpdir(), 'lsm-tag-race-')), 't');
  dirs.push(dir);
  let now = 1_800_000_000_000;
  const clock = () => now;
  const schema = TableSchema.fromSpec(
    { fields: [{ name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'INT' }], primaryKeys: ['k'], options: { bucket: '1', 'snapshot.num-retained.min': '1', ...options } },
    0,
  );
  const table = Table.create(dir, schema, { clock });
  const io = new TagHookIO(table.fileIO);
  const tagger = Table.open(dir, { clock, fileIO: io });
  return { dir, table, tagger, io, advance: (ms: number) => (now += ms) };
}

/** Every manifest list and data file the tag names, as a fresh reader reads it; or the error. */
function readTag(dir: string, name: string): string {
  try {
    return JSON.stringify(Table.open(dir).scanRows({ tag: name }));
  } catch (e) {
    return e instanceof LsmError ? `${e.kind}` : String(e);
  }
}

function kindOf(f: () => unknown): string {
  try {
    f();
    return 'none';
  } catch (e) {
    if (e instanceof LsmError) return e.kind;
    throw e;
  }
}

describe('tag creation against an expiration running meanwhile', () => {
  it('a snapshot expired between the read and the tag write: the tag is refused, not left without its files', () => {
    const { dir, table, tagger, io } = setup({ 'snapshot.num-retained.max': '2' });
    const w = table.newWriter();
    for (let i = 1; i <= 2; i++) {
      w.writeRecord({ k: 1, v: i });
      w.commit();
    }
    // The third commit expires snapshot 1 (beyond num-retained.max), its manifest lists with it.
    io.hook = () => {
      w.writeRecord({ k: 1, v: 3 });
      expect(w.commit().expire?.expiredSnapshots).toEqual([1]);
    };
    const got = kindOf(() => tagger.createTag('t', 1));
    w.close();
    // Either the tag stands and reads, or it was refused and left nothing behind.
    if (got === 'none') expect(readTag(dir, 't')).toBe(JSON.stringify([[1, 1]]));
    else {
      expect(got).toBe('NotFound');
      expect(existsSync(join(dir, 'tag', 'tag-t'))).toBe(false);
      expect(Table.open(dir).listTags()).toEqual([]);
    }
    expect(got).toBe('NotFound'); // this interleaving cannot keep the files
  });

  it('a retained snapshot is tagged as before when an expiration runs meanwhile', () => {
    const { dir, table, tagger, io } = setup({ 'snapshot.num-retained.max': '2' });
    const w = table.newWriter();
    for (let i = 1; i <= 2; i++) {
      w.writeRecord({ k: 1, v: i });
      w.commit();
    }
    io.hook = () => {
      w.writeRecord({ k: 1, v: 3 });
      expect(w.commit().expire?.expiredSnapshots).toEqual([1]);
    };
    expect(tagger.createTag('t', 2).snapshot.id).toBe(2);
    w.writeRecord({ k: 1, v: 4 });
    w.commit(); // expires snapshot 2; the tag keeps its files
    w.close();
    expect(readTag(dir, 't')).toBe(JSON.stringify([[1, 2]]));
  });

  it('tagging an expired snapshot from a tag that expires meanwhile is refused', () => {
    const { dir, table, tagger, io, advance } = setup({ 'snapshot.num-retained.max': '1' });
    const w = table.newWriter();
    w.writeRecord({ k: 1, v: 1 });
    w.commit();
    table.createTag('short', 1, 60_000);
    w.writeRecord({ k: 1, v: 2 });
    w.commit(); // snapshot 1 expires; the tag holds its files
    expect(table.snapshots.exists(1)).toBe(false);
    // Meanwhile the source tag's retention passes and an expiration deletes it and its files.
    io.hook = () => {
      advance(120_000);
      expect(w.expire().expiredTags).toEqual(['short']);
    };
    const got = kindOf(() => tagger.createTag('again', 1));
    w.close();
    if (got === 'none') expect(readTag(dir, 'again')).toBe(JSON.stringify([[1, 1]]));
    else expect(existsSync(join(dir, 'tag', 'tag-again'))).toBe(false);
    expect(got).toBe('Conflict');
  });

  it('tagging an expired snapshot from a tag well inside its retention, or without one, works', () => {
    const { dir, table, tagger } = setup({ 'snapshot.num-retained.max': '1' });
    const w = table.newWriter();
    w.writeRecord({ k: 1, v: 1 });
    w.commit();
    table.createTag('long', 1, 2 * RENEW_MARGIN_MS);
    table.createTag('forever', 1);
    w.writeRecord({ k: 1, v: 2 });
    w.commit();
    w.close();
    expect(table.snapshots.exists(1)).toBe(false);
    expect(tagger.createTag('again', 1).snapshot.id).toBe(1);
    expect(readTag(dir, 'again')).toBe(JSON.stringify([[1, 1]]));
    tagger.deleteTag('forever');
    expect(tagger.createTag('again2', 1).snapshot.id).toBe(1); // from 'long'
  });
});
