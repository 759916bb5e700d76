// Tables written by Java Paimon (../shared/fixtures/paimon/, see PROVENANCE.md) read back with
// the rows their provenance lists. Skips with a notice where ../shared is absent, never in CI.

import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LsmError } from './errors.ts';
import { Table } from './table.ts';
import { castFunction } from './cast.ts';
import { PAIMON_FIXTURES, paimonFixturesAvailable } from './testing/shared.ts';

const FIXTURES = PAIMON_FIXTURES;
const present = paimonFixturesAvailable('the Java Paimon fixture tests');

const rowText = (r: unknown[]) => r.map((v, i) => (i === 3 && typeof v === 'number' ? v.toFixed(1) : String(v))).join(',');

describe.skipIf(!present)('tables written by Java Paimon', () => {
  const MOR_EXPECTED = [
    'Alice,10,1,19.1',
    'Two roads diverged in a wood, and I took the one less traveled by, And that has made all the difference.,10,1,11.0',
    'Bob,10,0,12.1',
    'David,10,0,17.1',
    'Emily,10,0,13.1',
    'Marco,10,0,21.1',
    'Marco2,10,0,31.1',
    'Skye,10,0,21.0',
    'Skye2,10,0,31.0',
    'Lucy,20,1,14.1',
    'Paul,20,1,18.1',
  ].sort();

  it('reads the partitioned two-bucket primary-key table at its latest snapshot', () => {
    const t = Table.open(join(FIXTURES, 'java13-pk-parquet-mor-partitioned-2buckets'));
    expect(t.latestSnapshot()?.id).toBe(5);
    expect(t.scanRows().map(rowText).sort()).toEqual(MOR_EXPECTED);
  });

  it('reads every earlier snapshot, and looks keys up through the Java bucket hash', () => {
    const t = Table.open(join(FIXTURES, 'java13-pk-parquet-mor-partitioned-2buckets'));
    expect(t.scanRows({ snapshotId: 1 })).toHaveLength(9);
    const s2 = t.scanRows({ snapshotId: 2 }).map(rowText);
    expect(s2.some((r) => r.startsWith('Tony,'))).toBe(false);
    expect(s2).toContain('Alice,10,1,19.1');
    // snapshot 4 still has Alex; 5 deletes him
    expect(t.scanRows({ snapshotId: 4 }).map(rowText).some((r) => r.startsWith('Alex,'))).toBe(true);
    const r = t.reader();
    expect(r.get({ f0: 'Alice', f1: 10, f2: 1 })).toEqual(['Alice', 10, 1, 19.1]);
    expect(r.get({ f0: 'Alex', f1: 10, f2: 0 })).toBeUndefined();
    expect(r.get({ f0: 'Lucy', f1: 20, f2: 1 })?.[3]).toBe(14.1);
    r.close();
  });

  it('filters by key and partition', () => {
    const t = Table.open(join(FIXTURES, 'java13-pk-parquet-mor-partitioned-2buckets'));
    const rows = t.scanRows({}, { where: [{ column: 'f1', op: '=', value: 20 }] });
    expect(rows.map(rowText).sort()).toEqual(['Lucy,20,1,14.1', 'Paul,20,1,18.1']);
    const prefix = t.scanRows({}, { where: [{ column: 'f0', op: 'prefix', value: 'Sky' }], projection: ['f0'] });
    expect(prefix.map((r) => r[0]).sort()).toEqual(['Skye', 'Skye2']);
  });

  it('refuses the legacy table with ORC manifests with a clear "not supported"', () => {
    const t = Table.open(join(FIXTURES, 'java-legacy-pk-orc-data-orc-manifests'));
    let err: unknown;
    try {
      t.scanRows();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(LsmError);
    expect((err as LsmError).kind).toBe('NotSupported');
    expect((err as Error).message).toMatch(/ORC/i);
  });

  // Schema 7 of the evolution fixture: (k1,k0,p0,p1 INT NOT NULL, s1 STRING, s0 BYTES, v0 INT,
  // v1 STRING, v2 INT); ids 0..8. Its options say sequence.field=s0,s1 (ids 5,4: schema 7 reset
  // the option after the renames, which Paimon had rewritten to s1,s0).
  const EVOLVED_EXPECTED = [
    '0,0,0,0,apple,see,110,false,null',
    '0,1,0,0,banana,you,11,false,null',
    '1,0,0,0,car,later,12,true,null',
    '1,1,0,0,driver,!,13,false,null',
    '1,2,0,0,driver,!,13,false,null',
    '100,200,0,0,max,number,140,false,null',
    '0,1,0,1,zoo,you,130,false,null',
    '0,0,1,0,elephant,hi,120,false,null',
  ].sort();
  const evolvedText = (r: unknown[]) => r.map((v) => (v instanceof Uint8Array ? Buffer.from(v).toString('utf8') : String(v))).join(',');

  it('reads the schema-evolution table at its latest schema (renames, casts, added column) by field id', () => {
    const t = Table.open(join(FIXTURES, 'java13-pk-parquet-schema-evolution-2level-partitions'));
    expect(t.schema.id).toBe(7);
    expect(t.schema.fields.map((f) => `${f.id}:${f.name}`)).toEqual(['0:k1', '1:k0', '2:p0', '3:p1', '4:s1', '5:s0', '6:v0', '7:v1', '8:v2']);
    expect(t.schema.options.sequenceFields).toEqual(['s0', 's1']);
    const rows = t.scanRows();
    expect(rows.map(evolvedText).sort()).toEqual(EVOLVED_EXPECTED);
    // Types of schema 7: s0 BYTES, v0 INT (110.0 → 110, 11.1 → 11), v1 STRING.
    const apple = rows.find((r) => r[4] === 'apple')!;
    expect(apple[5]).toBeInstanceOf(Uint8Array);
    expect(apple[6]).toBe(110);
    expect(apple[7]).toBe('false');
    expect(apple[8]).toBeNull();
  });

  it('gives, through schema-0 naming and the listed casts, exactly the rows PROVENANCE lists', () => {
    const t = Table.open(join(FIXTURES, 'java13-pk-parquet-schema-evolution-2level-partitions'));
    const s0 = t.schemaById(0);
    // PROVENANCE.md, schema-0 naming (k0,k1,p0,p1,s0,s1,v0,v1).
    const provenance: unknown[][] = [
      [0, 0, 0, 0, 'apple', 'see', 110.0, false],
      [0, 1, 0, 0, 'banana', 'you', 11.1, false],
      [1, 0, 0, 0, 'car', 'later', 12.2, true],
      [1, 1, 0, 0, 'driver', '!', 13.3, false],
      [1, 2, 0, 0, 'driver', '!', 13.3, false],
      [100, 200, 0, 0, 'max', 'number', 140.4, false],
      [0, 1, 0, 1, 'zoo', 'you', 130.0, false],
      [0, 0, 1, 0, 'elephant', 'hi', 120.0, false],
    ];
    // Map each schema-0 row to schema 7 by field id, casting as Paimon does.
    const expected = provenance.map((row) =>
      t.schema.fields.map((f) => {
        const i = s0.fields.findIndex((o) => o.id === f.id);
        return i < 0 ? null : castFunction(s0.fields[i]!.type, f.type, f.name)(row[i]);
      }),
    );
    expect(t.scanRows().map(evolvedText).sort()).toEqual(expected.map(evolvedText).sort());
  });

  it('reads the append table with Avro data files and its six timestamp kinds', () => {
    const t = Table.open(join(FIXTURES, 'java13-append-avro-datafiles-timestamps'));
    expect(t.schema.isPrimaryKeyTable).toBe(false);
    expect(t.schema.options.bucket).toBe(-1);
    // Microseconds: TIMESTAMP(0/3/6), then WITH LOCAL TIME ZONE (0/3/6).
    expect(t.scanRows()).toEqual([
      [1_000_000, 1000, 1, 2_000_000, 2000, 2],
      [null, 3000, null, null, 4000, null],
      [5_000_000, null, 5, 6_000_000, null, 6],
    ]);
    expect(t.scanRows({}, { projection: ['ts_micro'], where: [{ column: 'ts_micro', op: '>', value: 1 }] })).toEqual([[5]]);
  });
});

describe.skipIf(!present)('committing to a table Java Paimon wrote', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('carries the watermark, the statistics file (while the schema stays) and nextRowId forward, as Paimon commits do', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lsm-fixture-'));
    dirs.push(dir);
    cpSync(join(FIXTURES, 'java13-pk-parquet-mor-partitioned-2buckets'), dir, { recursive: true });
    const t = Table.open(dir);
    t.alter([{ kind: 'setOption', key: 'file.compression', value: 'snappy' }]); // Java's default zstd is not written here
    // Java's last snapshot as if it had a watermark and a statistics file (ANALYZE TABLE after the ALTER).
    const stats = 'stat-6b0c2f6e-9f49-4d8e-9d38-4d8f4f0a1c55-0';
    mkdirSync(join(dir, 'statistics'));
    writeFileSync(join(dir, 'statistics', stats), JSON.stringify({ snapshotId: 5, schemaId: 1, mergedRecordCount: 11, mergedRecordSize: 1024, colStats: {} }));
    const file = join(dir, 'snapshot', 'snapshot-5');
    writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), schemaId: 1, watermark: 1756267000000, statistics: stats }, null, 2));
    t.snapshots.invalidate();
    const w = t.newWriter({ commitUser: 'tilstand-test' });
    w.writeRecord({ f0: 'Zed', f1: 10, f2: 0, f3: 1.5 });
    w.commit();
    w.compact(true);
    const carried = (id: number) => {
      const s = t.snapshots.get(id);
      return { watermark: s.watermark, statistics: s.statistics, nextRowId: s.nextRowId };
    };
    const kinds = [];
    for (let id = 6; id <= t.latestSnapshot()!.id; id++) {
      kinds.push(t.snapshots.get(id).commitKind);
      expect(carried(id)).toEqual({ watermark: 1756267000000n, statistics: stats, nextRowId: 0 });
    }
    expect(kinds).toContain('APPEND');
    expect(kinds).toContain('COMPACT');
    // A rollback as latest takes the target's fields.
    expect(carried(w.rollbackTo(5, { keepHistory: true }).snapshotId!)).toEqual({ watermark: 1756267000000n, statistics: stats, nextRowId: 0 });
    w.close();
    // Statistics of another schema are not inherited (Paimon: "Schema changed, stats will not be inherited").
    t.alter([{ kind: 'addColumn', name: 'f4', type: 'INT' }]);
    const w2 = t.newWriter({ commitUser: 'tilstand-test' });
    w2.writeRecord({ f0: 'Zoe', f1: 20, f2: 1, f3: 2.5, f4: 4 });
    expect(carried(w2.commit().snapshotId!)).toEqual({ watermark: 1756267000000n, statistics: null, nextRowId: 0 });
    w2.close();
    expect(t.scanRows().map((r) => r[0])).toContain('Zoe');
  });
});
