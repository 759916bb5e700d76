import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import { ForwardingFileIO, LocalFileIO, type FileIO } from './file-io.ts';
import { fsyncedDuring } from './testing/fsync-spy.ts';

const root = fs.mkdtempSync(join(tmpdir(), 'tilstand-file-io-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

describe('ForwardingFileIO', () => {
  it('hands every call to the inner FileIO', () => {
    const io = new ForwardingFileIO(new LocalFileIO());
    const dir = join(root, 'fwd');
    io.mkdirs(dir);
    io.writeNew(join(dir, 'a'), Buffer.from('one'));
    expect(io.createAtomic(join(dir, 'b'), Buffer.from('two'))).toBe(true);
    expect(io.createAtomic(join(dir, 'b'), Buffer.from('again'))).toBe(false);
    io.replaceAtomic(join(dir, 'b'), Buffer.from('three'));
    expect(io.readFile(join(dir, 'a')).toString()).toBe('one');
    expect(io.readFileIfExists(join(dir, 'b'))?.toString()).toBe('three');
    expect(io.readFileIfExists(join(dir, 'none'))).toBeUndefined();
    expect(io.list(dir).sort()).toEqual(['a', 'b']);
    expect(io.size(join(dir, 'b'))).toBe(5);
    expect(io.mtimeMs(join(dir, 'b'))).toBe(fs.statSync(join(dir, 'b')).mtimeMs);
    expect(io.stat?.(join(dir, 'b'))?.ino).toBe(fs.statSync(join(dir, 'b')).ino);
    io.remove(join(dir, 'a'));
    expect(io.exists(join(dir, 'a'))).toBe(false);
    io.removeDir(dir);
    expect(fs.existsSync(dir)).toBe(false);
  });

  it('offers stat only when the inner FileIO does (callers fall back to size and mtime)', () => {
    const local = new LocalFileIO();
    const withoutStat: FileIO = Object.assign(Object.create(local) as FileIO, { stat: undefined });
    expect(new ForwardingFileIO(local).stat).toBeTypeOf('function');
    expect(new ForwardingFileIO(withoutStat).stat).toBeUndefined();
  });

  it('lets a subclass watch one call and forwards the rest', () => {
    class Counting extends ForwardingFileIO {
      written = 0;
      override writeNew(path: string, data: Uint8Array): void {
        super.writeNew(path, data);
        this.written += data.length;
      }
    }
    const io = new Counting(new LocalFileIO());
    io.writeNew(join(root, 'c'), Buffer.alloc(7));
    expect(io.written).toBe(7);
    expect(io.size(join(root, 'c'))).toBe(7);
  });
});

describe('LocalFileIO: the names of new files are durable before a snapshot names them', () => {
  it('fsyncs the bucket and manifest directories of a commit once each, before the snapshot is written', () => {
    const catalog = new Catalog(join(root, 'commit'));
    catalog.createDatabase('db');
    const table = catalog.createTable({ database: 'db', table: 't' }, { fields: [{ name: 'k', type: 'STRING' }, { name: 'v', type: 'INT' }], primaryKeys: ['k'], options: { bucket: '1' } });
    const w = table.newWriter();
    w.writeRecord({ k: 'a', v: 1 });
    const synced = fsyncedDuring(() => w.commit());
    w.close();
    const t = resolve(table.paths.root);
    const snapshotFile = synced.findIndex((p) => p.startsWith(join(t, 'snapshot', '.snapshot-')));
    expect(snapshotFile).toBeGreaterThan(0);
    // A file's fsync does not make its name durable: without its directory's, a power cut could
    // keep the snapshot (its directory is fsynced) and lose the name of a file it lists.
    for (const d of [join(t, 'bucket-0'), join(t, 'manifest')]) {
      expect(synced.filter((p) => p === d), d).toHaveLength(1); // was 0
      expect(synced.indexOf(d), d).toBeLessThan(snapshotFile);
    }
    expect(synced.filter((p) => p.startsWith(join(t, 'manifest', 'manifest-')))).not.toHaveLength(0);
  });
});
