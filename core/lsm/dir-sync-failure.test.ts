// A folder's fsync that fails (EIO: the disk) fails the atomic write that needed it, with an
// IOError naming the folder; a refusal that says the file system does not sync folders (EINVAL,
// ENOTSUP, …: DIR_SYNC_NOT_SUPPORTED in file-io.ts) is passed over. Before, every failure of a
// folder's open or fsync was passed over, and a commit whose snapshot's name, or the names of the
// files it lists, might not survive a power cut reported success.
// The faults are injected at node:fs (testing/fs-faults.ts), under the real LocalFileIO.

import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LsmError } from './errors.ts';
import { LocalFileIO } from './file-io.ts';
import { TableSchema, type SchemaSpec } from './schema.ts';
import { Table } from './table.ts';
import { withFsFault } from './testing/fs-faults.ts';
import { fsyncedDuring } from './testing/fsync-spy.ts';

const root = fs.mkdtempSync(join(tmpdir(), 'tilstand-dir-sync-'));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
let n = 0;
const newDir = (): string => {
  const d = join(root, `d${n++}`);
  fs.mkdirSync(d);
  return resolve(d);
};

/** What `fn` threw (undefined when it returned). */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (e) {
    return e;
  }
  return undefined;
}

function expectIOErrorNaming(e: unknown, folder: string, code = 'EIO'): void {
  expect(e, 'the write did not fail').toBeInstanceOf(LsmError);
  const err = e as LsmError;
  expect(err.kind).toBe('IOError');
  expect(err.message).toContain(`folder ${folder}`);
  expect(err.message).toContain(code);
  expect((err.cause as NodeJS.ErrnoException | undefined)?.code).toBe(code);
}

describe('LocalFileIO: a folder fsync that fails', () => {
  it('createAtomic: EIO on the folder after the link fails the write, naming the folder, and takes the name back', () => {
    const io = new LocalFileIO();
    const dir = newDir();
    const file = join(dir, 'snapshot-1');
    let e: unknown;
    const failed = withFsFault({ at: 'fsync', code: 'EIO', paths: [dir] }, () => {
      e = thrown(() => io.createAtomic(file, Buffer.from('one')));
    });
    expect(failed).toEqual([dir]);
    expectIOErrorNaming(e, dir);
    // Thrown means not made, as for every other failure of createAtomic: its callers (the commit)
    // write it again, which a name left in place would turn into a Conflict or a second commit.
    expect(fs.existsSync(file)).toBe(false);
    expect(fs.readdirSync(dir)).toEqual([]); // no temporary file either
    expect(io.createAtomic(file, Buffer.from('two'))).toBe(true);
    expect(fs.readFileSync(file, 'utf8')).toBe('two');
  });

  it('createAtomic: EIO on the open of the folder fails the write as well', () => {
    const io = new LocalFileIO();
    const dir = newDir();
    let e: unknown;
    withFsFault({ at: 'open', code: 'EIO', paths: [dir] }, () => {
      e = thrown(() => io.createAtomic(join(dir, 'tag-a'), Buffer.from('x')));
    });
    expectIOErrorNaming(e, dir);
    expect(fs.existsSync(join(dir, 'tag-a'))).toBe(false);
  });

  it('createAtomic: EIO on a folder a new file went to fails the write before it, and the folder stays to be synced', () => {
    const io = new LocalFileIO();
    const bucket = newDir();
    const snapshots = newDir();
    io.writeNew(join(bucket, 'data-1.parquet'), Buffer.from('rows'));
    let e: unknown;
    withFsFault({ at: 'fsync', code: 'EIO', paths: [bucket] }, () => {
      e = thrown(() => io.createAtomic(join(snapshots, 'snapshot-1'), Buffer.from('{}')));
    });
    expectIOErrorNaming(e, bucket);
    // The snapshot was not written: the name of a file it lists might not survive a power cut.
    expect(fs.readdirSync(snapshots)).toEqual([]);
    // The next atomic write syncs that folder again before it writes.
    const synced = fsyncedDuring(() => expect(io.createAtomic(join(snapshots, 'snapshot-1'), Buffer.from('{}'))).toBe(true));
    expect(synced).toContain(bucket);
    expect(synced.indexOf(bucket)).toBeLessThan(synced.findIndex((p) => p.includes('.snapshot-1.')));
  });

  it('replaceAtomic: EIO on the folder after the rename fails the write, naming the folder', () => {
    const io = new LocalFileIO();
    const dir = newDir();
    const file = join(dir, 'LATEST');
    io.replaceAtomic(file, Buffer.from('1'));
    let e: unknown;
    withFsFault({ at: 'fsync', code: 'EIO', paths: [dir] }, () => {
      e = thrown(() => io.replaceAtomic(file, Buffer.from('2')));
    });
    expectIOErrorNaming(e, dir);
    // A rename cannot be taken back (the old content is gone): the new content is in place, and
    // the error says it may not survive a power cut. Every replaceAtomic caller writes the same
    // again on a retry.
    expect(fs.readFileSync(file, 'utf8')).toBe('2');
    expect(fs.readdirSync(dir)).toEqual(['LATEST']);
  });

  for (const code of ['EINVAL', 'ENOTSUP', 'EOPNOTSUPP']) {
    for (const at of ['open', 'fsync'] as const) {
      it(`${code} on the folder's ${at} is passed over: the file system does not sync folders`, () => {
        const io = new LocalFileIO();
        const bucket = newDir();
        const dir = newDir();
        io.writeNew(join(bucket, 'data-1.parquet'), Buffer.from('rows'));
        withFsFault({ at, code, paths: [bucket, dir] }, () => {
          expect(io.createAtomic(join(dir, 'snapshot-1'), Buffer.from('{}'))).toBe(true);
          io.replaceAtomic(join(dir, 'LATEST'), Buffer.from('1'));
        });
        expect(fs.readdirSync(dir).sort()).toEqual(['LATEST', 'snapshot-1']);
      });
    }
  }
});

const PK: SchemaSpec = {
  fields: [{ name: 'k', type: 'INT' }, { name: 'v', type: 'STRING' }],
  primaryKeys: ['k'],
  options: { bucket: '1' },
};

function newTable(spec: SchemaSpec): Table {
  const dir = newDir();
  return Table.create(dir, TableSchema.fromSpec(spec, Date.now()), { fileIO: new LocalFileIO() });
}

const byKey = (rows: unknown[][]) => rows.sort((a, b) => (a[0] as number) - (b[0] as number));

describe('a table commit whose snapshot folder fsync fails with EIO', () => {
  const variants: Record<string, SchemaSpec> = {
    'primary key': PK,
    'deletion vectors': { ...PK, options: { bucket: '1', 'deletion-vectors.enabled': 'true' } },
    append: { fields: PK.fields, options: { bucket: '-1' } },
  };
  for (const [name, spec] of Object.entries(variants)) {
    it(`${name}: the commit fails with an IOError naming the folder, and its retry commits the rows once`, () => {
      const table = newTable(spec);
      const w = table.newWriter();
      w.writeRecord({ k: 1, v: 'a' });
      w.commit({ progress: '1' });
      const before = table.latestSnapshot()!.id;
      w.writeRecord({ k: 2, v: 'b' });
      const snapshotDir = resolve(table.paths.root, 'snapshot');
      let e: unknown;
      withFsFault({ at: 'fsync', code: 'EIO', paths: [snapshotDir] }, () => {
        e = thrown(() => w.commit({ progress: '2' }));
      });
      expectIOErrorNaming(e, snapshotDir);
      // Not made: no snapshot a retry would add the same files to a second time.
      expect(fs.existsSync(table.paths.snapshotFile(before + 1))).toBe(false);
      expect(table.latestSnapshot()!.id).toBe(before);
      expect(table.committedProperties()).toEqual({ progress: '1' });
      const again = w.commit({ progress: '2' });
      w.close();
      expect(again.snapshotId).toBe(before + 1);
      expect(byKey(table.scanRows())).toEqual([[1, 'a'], [2, 'b']]);
      expect(table.committedProperties()).toEqual({ progress: '2' });
    });
  }
});
