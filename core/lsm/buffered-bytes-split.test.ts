// A record the write buffer cannot fold into what it holds for its key (a partial-update row after
// a delete that removes it) makes the writer flush that bucket and add the record to the emptied
// buffer. The writer's count of buffered bytes (what `write-buffer-size` is checked against) took
// the flushed bytes off twice: it fell to 0 with a row in the buffer, and the buffer could grow
// past its size unflushed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { RowKind } from './key-value.ts';
import { TableSchema } from './schema.ts';
import { Table } from './table.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function writer() {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-buffered-split-'));
  dirs.push(dir);
  const spec = {
    fields: [{ name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'STRING' }],
    primaryKeys: ['k'],
    options: { bucket: '1', 'merge-engine': 'partial-update', 'partial-update.remove-record-on-delete': 'true' },
  };
  return Table.create(dir, TableSchema.fromSpec(spec, 0)).newWriter();
}

it('counts the record added after a flush the buffer asked for, and only it', () => {
  const w = writer();
  const alone = writer();
  try {
    w.write([1, 'a'.repeat(100)], RowKind.INSERT);
    w.write([1, null], RowKind.DELETE);
    // Cannot fold into the removed row: the bucket is flushed first, then this is what it holds.
    w.write([1, 'c'], RowKind.INSERT);
    alone.write([1, 'c'], RowKind.INSERT);
    expect(w.bufferedEstimateBytes).toBeGreaterThan(0);
    expect(w.bufferedEstimateBytes).toBe(alone.bufferedEstimateBytes);
  } finally {
    w.close();
    alone.close();
  }
});
