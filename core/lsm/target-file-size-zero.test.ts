// `target-file-size` = '0' (or any size below one row's): Paimon accepts it (MemorySize.parse) and
// its rolling writer checks a file's size only every 1000 records
// (RollingFileWriter.CHECK_ROLLING_RECORD_CNT), so its files hold 1000 rows. Here the rows per file
// are estimated from the bytes per row, and an estimate below one row wrote one file per row:
// thousands of one-row files from a compaction or an append flush, each scan opening them all.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Table } from './table.ts';
import { TableSchema } from './schema.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const fresh = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'tfs0-'));
  dirs.push(d);
  return d;
};
const liveFiles = (t: Table): number[] => t.buckets(t.latestSnapshot()!).flatMap((b) => b.files.map((f) => f.rowCount));

describe("target-file-size '0' rolls files as Paimon does (every 1000 rows), not after every row", () => {
  for (const size of ['0', '0 b', '1 b']) {
    it(`primary-key table, full compaction (${size})`, () => {
      const t = Table.create(fresh(), TableSchema.fromSpec({ fields: [{ name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'STRING' }], primaryKeys: ['k'], options: { bucket: '1', 'target-file-size': size } }, 0));
      for (let c = 0; c < 3; c++) {
        const w = t.newWriter();
        for (let i = 0; i < 1000; i++) w.write([i + c * 500, `value-${c}-${i}`]);
        w.commit();
        w.close();
      }
      const w = t.newWriter();
      w.compact(true);
      w.commit();
      w.close();
      expect(t.scanRows()).toHaveLength(2000);
      expect(liveFiles(t).sort((a, b) => b - a)).toEqual([1000, 1000]);
    });

    it(`append table, flush (${size})`, () => {
      const t = Table.create(fresh(), TableSchema.fromSpec({ fields: [{ name: 'k', type: 'INT' }, { name: 'v', type: 'STRING' }], primaryKeys: [], options: { 'target-file-size': size } }, 0));
      const w = t.newWriter();
      for (let i = 0; i < 2500; i++) w.write([i, `value-${i}`]);
      w.commit();
      w.close();
      expect(t.scanRows()).toHaveLength(2500);
      expect(liveFiles(t).sort((a, b) => b - a)).toEqual([1000, 1000, 500]);
    });
  }
});
