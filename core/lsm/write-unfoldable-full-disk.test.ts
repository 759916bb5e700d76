// A record that cannot fold into the one its key holds in the write buffer (partial-update: an
// update after a removal of the key) makes the write flush the bucket before it takes its row.
// When that flush's file write failed (a full disk), the write threw the bare ENOSPC without
// taking its row, although every error of a write but a refusal ("row not taken") comes after its
// row was taken (DESIGN.md, "Write path", step 3): a caller going by that lost the row (here the
// key read as deleted). The drained records are kept for the next flush and the buffer is empty,
// so the row is now taken and the failure thrown after it; where the flush failed before the
// drain (the `input` changelog's file), the key's record is still in the buffer and the write is
// refused, its row not taken.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { localFileIO } from './file-io.ts';
import { RowKind } from './key-value.ts';
import { TableSchema } from './schema.ts';
import { Table } from './table.ts';
import { FullDiskIO } from './test-full-disk.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A partial-update table that removes a key on -D, with key 1 committed and then removed in the buffer. */
function keyRemovedInBuffer(extra: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-unfoldable-'));
  dirs.push(dir);
  const io = new FullDiskIO(localFileIO);
  const options = { bucket: '1', 'merge-engine': 'partial-update', 'partial-update.remove-record-on-delete': 'true', ...extra };
  const spec = { fields: [{ name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'STRING' }], primaryKeys: ['k'], options };
  const table = Table.create(dir, TableSchema.fromSpec(spec, 0), { fileIO: io });
  const w = table.newWriter();
  w.writeRecord({ k: 1, v: 'a' });
  w.commit();
  w.writeRecord({ k: 1, v: 'a' }, RowKind.DELETE);
  return { table, io, w };
}

it('an update after a removal of its key, whose flush fails on a full disk, takes its row and throws the failure', () => {
  const { table, io, w } = keyRemovedInBuffer({});
  io.full = true;
  expect(() => w.writeRecord({ k: 1, v: 'b' })).toThrow(/^write .* failed: ENOSPC/);
  io.full = false;
  w.commit();
  w.close();
  expect(table.scanRows()).toEqual([[1, 'b']]);
});

it("the same with the input changelog, whose file fails before the drain: refused, the row not taken", () => {
  const { table, io, w } = keyRemovedInBuffer({ 'changelog-producer': 'input' });
  io.full = true;
  expect(() => w.writeRecord({ k: 1, v: 'b' })).toThrow(expect.objectContaining({ kind: 'IOError', message: expect.stringMatching(/write refused, the row not taken: .*ENOSPC/) }));
  io.full = false;
  w.commit();
  w.close();
  expect(table.scanRows()).toEqual([]);
  expect([...table.changes({ from: 0, mode: 'changelog' })].map((c) => `${c.kind}${JSON.stringify(c.row)}`)).toEqual(['+I[1,"a"]', '-D[1,"a"]']);
});
