// Rows a failed flush keeps (a full disk: write path, step 3) stay in memory until a flush or
// commit writes them. They did not count toward `write-buffer-size` in a primary-key table (the
// writer's count dropped them when the buffer was drained), so a caller that kept writing to a
// full disk took a buffer's worth more at every failed flush, without bound; an append table's
// writer took every row and tried the whole flush again for each. Now the kept rows count, and
// once the rows held fill the buffer a write flushes them first, and is refused before it takes
// its row when that fails again (IOError naming 'write-buffer-size' and the failure).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { LsmError } from './errors.ts';
import { localFileIO } from './file-io.ts';
import { TableSchema } from './schema.ts';
import { Table } from './table.ts';
import { FullDiskIO } from './test-full-disk.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const ROWS = 2_000; // far more than the buffer holds (about 40 of these rows per KiB)

it.each([
  ['primary-key', true, {}],
  // The flush fails at the changelog file, before the buffer is drained.
  ['primary-key input-changelog', true, { 'changelog-producer': 'input' }],
  ['append', false, {}],
] as const)('%s table: rows kept after a failed flush count toward write-buffer-size, and fill it at most once', (_kind, primaryKey, extra) => {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-kept-rows-'));
  dirs.push(dir);
  const io = new FullDiskIO(localFileIO);
  const options: Record<string, string> = { 'write-buffer-size': '4 kb', 'write-only': 'true', ...(primaryKey ? { bucket: '1' } : {}), ...extra };
  const spec = { fields: [{ name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'STRING' }], primaryKeys: primaryKey ? ['k'] : [], options };
  const t = Table.create(dir, TableSchema.fromSpec(spec, 0), { fileIO: io });
  const limit = t.schema.options.writeBufferBytes;
  const w = t.newWriter();
  io.full = true;
  const taken: number[] = [];
  let refusal: LsmError | undefined;
  let failedFlushes = 0;
  for (let k = 0; k < ROWS && refusal === undefined; k++) {
    try {
      w.writeRecord({ k, v: 'value' });
      taken.push(k);
    } catch (e) {
      expect(e).toBeInstanceOf(LsmError);
      if (/refused/.test((e as Error).message)) refusal = e as LsmError;
      else {
        // The flush failed, not the row: it is kept with the others, and counted.
        expect((e as Error).message).toMatch(/ENOSPC/);
        taken.push(k);
        failedFlushes++;
        expect(w.bufferedEstimateBytes).toBeGreaterThanOrEqual(limit);
      }
    }
  }
  expect(failedFlushes).toBe(1);
  expect(refusal, `no write was refused in ${ROWS} rows`).toBeDefined();
  expect(refusal!.kind).toBe('IOError');
  expect(refusal!.message).toMatch(/row not taken.*'write-buffer-size'.*could not be written.*ENOSPC/s);
  expect(w.bufferedEstimateBytes).toBeLessThan(limit + 1024);
  // Still refused while the disk is full; once it takes them, the next write writes them first.
  expect(() => w.writeRecord({ k: ROWS, v: 'value' })).toThrow(/refused/);
  io.full = false;
  w.writeRecord({ k: ROWS + 1, v: 'value' });
  taken.push(ROWS + 1);
  expect(w.bufferedEstimateBytes).toBeLessThan(limit);
  w.commit();
  expect(w.bufferedEstimateBytes).toBe(0);
  w.close();
  expect(t.scanRows().map((r) => r[0] as number).sort((a, b) => a - b)).toEqual(taken);
});
