// Every error a `write` throws says whether the write took its row (`LsmError.rowTaken`): a
// refusal leaves the writer as it was (a value that does not fit, or the rows a failed flush kept
// filling the buffer: "row not taken"), a flush or merge that fails after the take leaves the row
// in the writer, and the next commit holds it (DESIGN.md, write path, step 3). A caller that must
// tell the two apart (core/ingest: a letter for the event, or a failing disk) had only the
// message to go by.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { LsmError } from './errors.ts';
import { localFileIO } from './file-io.ts';
import { RowKind } from './key-value.ts';
import { TableSchema } from './schema.ts';
import { Table } from './table.ts';
import { FullDiskIO } from './test-full-disk.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function table(options: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-row-taken-'));
  dirs.push(dir);
  const io = new FullDiskIO(localFileIO);
  const spec = { fields: [{ name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'STRING' }], primaryKeys: ['k'], options: { bucket: '1', 'write-only': 'true', ...options } };
  const t = Table.create(dir, TableSchema.fromSpec(spec, 0), { fileIO: io });
  return { t, io, w: t.newWriter() };
}

/** The error `f` throws (it must throw an LsmError). */
function thrown(f: () => void): LsmError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(LsmError);
    return e as LsmError;
  }
  throw new Error('expected a throw');
}

const keys = (t: Table) => t.scanRows().map((r) => r[0] as number).sort((a, b) => a - b);

it('a value that does not fit: InvalidArgument, rowTaken false, nothing written', () => {
  const { t, w } = table({});
  const e = thrown(() => w.writeRecord({ k: null, v: 'a' }));
  expect(e.kind).toBe('InvalidArgument');
  expect(e.rowTaken).toBe(false);
  w.commit();
  w.close();
  expect(keys(t)).toEqual([]);
});

it('a flush that fails after the take (a full disk): IOError, rowTaken true, and the next commit holds the row', () => {
  const { t, io, w } = table({ 'write-buffer-size': '4 kb' });
  io.full = true;
  let failure: LsmError | undefined;
  const taken: number[] = [];
  // Bounded: about 40 rows fill 1 KiB, so the buffer is full well before 2,000.
  for (let k = 0; k < 2_000 && failure === undefined; k++) {
    try {
      w.writeRecord({ k, v: 'value' });
    } catch (e) {
      failure = e as LsmError;
    }
    taken.push(k);
  }
  expect(failure, 'no flush failed in 2,000 rows').toBeDefined();
  expect(failure!.kind).toBe('IOError');
  expect(failure!.message).toMatch(/^write .* failed: ENOSPC/); // the message is as before
  expect(failure!.rowTaken).toBe(true);
  // Once the kept rows fill the buffer, the next write is refused: rowTaken false, same kind.
  const refusal = thrown(() => w.writeRecord({ k: 5_000, v: 'value' }));
  expect(refusal.kind).toBe('IOError');
  expect(refusal.message).toMatch(/write refused, the row not taken/);
  expect(refusal.rowTaken).toBe(false);
  io.full = false;
  w.commit();
  w.close();
  expect(keys(t)).toEqual(taken);
});

it('an unfoldable record whose flush fails after the drain: rowTaken true; before the drain (input changelog): rowTaken false', () => {
  for (const [extra, rowTaken, want] of [
    [{}, true, [[1, 'b']]],
    [{ 'changelog-producer': 'input' }, false, []],
  ] as const) {
    const { t, io, w } = table({ 'merge-engine': 'partial-update', 'partial-update.remove-record-on-delete': 'true', ...extra });
    w.writeRecord({ k: 1, v: 'a' });
    w.commit();
    w.writeRecord({ k: 1, v: 'a' }, RowKind.DELETE);
    io.full = true;
    const e = thrown(() => w.writeRecord({ k: 1, v: 'b' }));
    expect(e.kind).toBe('IOError');
    expect(e.rowTaken).toBe(rowTaken);
    io.full = false;
    w.commit();
    w.close();
    expect(t.scanRows()).toEqual(want);
  }
});

it("an error of anything but a write says nothing of a row: a commit's failed flush has rowTaken undefined", () => {
  const { io, w } = table({});
  w.writeRecord({ k: 1, v: 'a' });
  io.full = true;
  const e = thrown(() => w.commit());
  expect(e.kind).toBe('IOError');
  expect(e.rowTaken).toBeUndefined();
  io.full = false;
  w.close();
});
