// A read point (ReadPoint: snapshotId, tag, timestampMs, schemaId) that is not a value of its kind
// is InvalidArgument naming the option and what was expected — not a RangeError from formatting
// the time deep inside, nor a NotFound that reads as if the table lacked "snapshot NaN".

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import { LsmError } from './errors.ts';
import type { ReadPoint, Table } from './table.ts';
import { thrownLsmError } from './testing/corruption.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function oneSnapshotTable(): Table {
  const d = mkdtempSync(join(tmpdir(), 'lsm-readpoint-'));
  dirs.push(d);
  const c = new Catalog(d);
  c.createDatabase('db', true);
  const t = c.createTable({ database: 'db', table: 't' }, { fields: [{ name: 'k', type: 'INT' }], primaryKeys: ['k'], options: { bucket: '1' } });
  const w = t.newWriter();
  w.write([1]);
  w.commit();
  w.close();
  return t;
}

describe('read point options', () => {
  const t = oneSnapshotTable();

  const bad: [keyof ReadPoint, unknown, RegExp][] = [
    ['timestampMs', NaN, /timestampMs.*expected .*milliseconds.*got number NaN/],
    ['timestampMs', Infinity, /timestampMs.*expected .*got number Infinity/],
    ['timestampMs', -Infinity, /timestampMs.*expected .*got number -Infinity/],
    ['timestampMs', 1.5, /timestampMs.*expected .*got number 1\.5/],
    ['timestampMs', '5', /timestampMs.*expected .*got "5"/],
    ['snapshotId', NaN, /snapshotId.*expected a snapshot id ≥ 1, got number NaN/],
    ['snapshotId', Infinity, /snapshotId.*got number Infinity/],
    ['snapshotId', -1, /snapshotId.*got number -1/],
    ['snapshotId', 0, /snapshotId.*got number 0/],
    ['snapshotId', 1.5, /snapshotId.*got number 1\.5/],
    ['snapshotId', '1', /snapshotId.*got "1"/],
    ['schemaId', NaN, /schemaId.*expected a schema id ≥ 0, got number NaN/],
    ['schemaId', -1, /schemaId.*got number -1/],
    ['schemaId', 0.5, /schemaId.*got number 0\.5/],
    ['tag', 5, /tag name 5 is not a string/],
  ];
  for (const [option, value, message] of bad) {
    it(`${option}: ${String(value)} (${typeof value}) is InvalidArgument naming the option`, () => {
      const e = thrownLsmError(() => t.reader({ [option]: value } as ReadPoint));
      expect(e.kind).toBe('InvalidArgument');
      expect(e.message).toMatch(message);
    });
  }

  it('good values still read (a time before the first snapshot stays NotFound naming the earliest)', () => {
    expect(t.scanRows({ snapshotId: 1 })).toEqual([[1]]);
    expect(t.scanRows({ timestampMs: t.latestSnapshot()!.timeMillis })).toEqual([[1]]);
    expect(t.scanRows({ schemaId: 0 })).toEqual([[1]]);
    expect(thrownLsmError(() => t.reader({ timestampMs: 0 })).message).toMatch(/earliest retained is 1/);
    expect(thrownLsmError(() => t.reader({ timestampMs: -1 })).kind).toBe('NotFound');
    expect(thrownLsmError(() => t.reader({ snapshotId: 2 })).kind).toBe('NotFound');
  });
});
