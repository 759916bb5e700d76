// Java Paimon (parquet-mr, ZSTD, data page v1, PLAIN + PLAIN_DICTIONARY) files from the shared
// fixtures: they must read with the rows PROVENANCE.md lists. Skips loudly when ../shared is
// absent, except in CI.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseType } from '../../types.ts';
import { readParquet, readParquetFooter, type ParquetReadColumn } from './index.ts';
import { PAIMON_FIXTURES, paimonFixturesAvailable } from '../../testing/shared.ts';

const root = paimonFixturesAvailable('the Java Parquet fixture tests') ? PAIMON_FIXTURES : undefined;

function parquetFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...parquetFiles(p));
    else if (name.endsWith('.parquet')) out.push(p);
  }
  return out.sort();
}

function rowsOf(file: string, request: ParquetReadColumn[]): Record<string, unknown>[] {
  const { rowCount, columns } = readParquet(readFileSync(file), request, file);
  return Array.from({ length: rowCount }, (_, r) => Object.fromEntries(request.map((c, i) => [c.name, columns[i]![r]])));
}

const t = parseType;

describe.skipIf(!root)('Java-written Parquet fixtures', () => {
  it('java13-pk-parquet-mor-partitioned-2buckets: footer as Java writes it', () => {
    const file = parquetFiles(join(PAIMON_FIXTURES, 'java13-pk-parquet-mor-partitioned-2buckets'))[0]!;
    const footer = readParquetFooter(readFileSync(file), file);
    expect(footer.columns).toEqual([
      { name: '_KEY_f0', fieldId: 1073741823, physicalType: 'BYTE_ARRAY', logicalType: 'STRING', required: true },
      { name: '_KEY_f2', fieldId: 1073741825, physicalType: 'INT32', required: true },
      { name: '_SEQUENCE_NUMBER', fieldId: 2147483646, physicalType: 'INT64', required: true },
      { name: '_VALUE_KIND', fieldId: 2147483645, physicalType: 'INT32', logicalType: 'INT(8,true)', required: true },
      { name: 'f0', fieldId: 0, physicalType: 'BYTE_ARRAY', logicalType: 'STRING', required: true },
      { name: 'f1', fieldId: 1, physicalType: 'INT32', required: true },
      { name: 'f2', fieldId: 2, physicalType: 'INT32', required: true },
      { name: 'f3', fieldId: 3, physicalType: 'DOUBLE', required: false },
    ]);
  });

  it('java13-pk-parquet-mor-partitioned-2buckets: merged rows are the 11 of snapshot 5', () => {
    const request: ParquetReadColumn[] = [
      { name: '_KEY_f0', type: t('STRING NOT NULL') },
      { name: '_KEY_f2', type: t('INT NOT NULL') },
      { name: '_SEQUENCE_NUMBER', type: t('BIGINT NOT NULL'), asNumber: true },
      { name: '_VALUE_KIND', type: t('TINYINT NOT NULL') },
      { name: 'f0', type: t('STRING NOT NULL') },
      { name: 'f1', type: t('INT NOT NULL') },
      { name: 'f2', type: t('INT NOT NULL') },
      { name: 'f3', type: t('DOUBLE') },
    ];
    const latest = new Map<string, Record<string, unknown>>();
    const files = parquetFiles(join(PAIMON_FIXTURES, 'java13-pk-parquet-mor-partitioned-2buckets'));
    expect(files.length).toBe(8);
    for (const file of files) {
      for (const row of rowsOf(file, request)) {
        expect(row._KEY_f0).toBe(row.f0);
        expect(row._KEY_f2).toBe(row.f2);
        const key = `${row.f1}/${row.f0}/${row.f2}`;
        const prev = latest.get(key);
        if (!prev || (prev._SEQUENCE_NUMBER as number) < (row._SEQUENCE_NUMBER as number)) latest.set(key, row);
      }
    }
    const live = [...latest.values()].filter((r) => r._VALUE_KIND === 0 || r._VALUE_KIND === 2);
    const got = live.map((r) => `${r.f0},${r.f1},${r.f2},${r.f3}`).sort();
    const long = 'Two roads diverged in a wood, and I took the one less traveled by, And that has made all the difference.';
    expect(got).toEqual(
      [
        'Alice,10,1,19.1',
        `${long},10,1,11`,
        'Bob,10,0,12.1',
        'David,10,0,17.1',
        'Emily,10,0,13.1',
        'Marco,10,0,21.1',
        'Marco2,10,0,31.1',
        'Skye,10,0,21',
        'Skye2,10,0,31',
        'Lucy,20,1,14.1',
        'Paul,20,1,18.1',
      ].sort(),
    );
  });

  it('java13-pk-parquet-schema-evolution-2level-partitions: rows by name, absent columns as null', () => {
    const request: ParquetReadColumn[] = [
      ...['k0', 'k1', 'p0', 'p1'].map((name) => ({ name, type: t('INT NOT NULL') })),
      { name: '_SEQUENCE_NUMBER', type: t('BIGINT NOT NULL') },
      { name: 's0', type: t('STRING') },
      { name: 's1', type: t('STRING') },
      { name: 'v0', type: t('DOUBLE') },
      { name: 'v1', type: t('BOOLEAN') },
      { name: 'v2', type: t('INT') }, // added in schema-1: absent from these files
    ];
    const latest = new Map<string, Record<string, unknown>>();
    const newer = (a: Record<string, unknown>, b: Record<string, unknown>): boolean => {
      // sequence.field = s0,s1 first, then the sequence number
      for (const f of ['s0', 's1']) if (a[f] !== b[f]) return (a[f] as string) > (b[f] as string);
      return (a._SEQUENCE_NUMBER as bigint) > (b._SEQUENCE_NUMBER as bigint);
    };
    for (const file of parquetFiles(join(PAIMON_FIXTURES, 'java13-pk-parquet-schema-evolution-2level-partitions'))) {
      for (const row of rowsOf(file, request)) {
        expect(row.v2).toBeNull();
        expect(typeof row._SEQUENCE_NUMBER).toBe('bigint');
        const key = `${row.k0},${row.k1},${row.p0},${row.p1}`;
        const prev = latest.get(key);
        if (!prev || newer(row, prev)) latest.set(key, row);
      }
    }
    const got = [...latest.values()].map((r) => `${r.k0},${r.k1},${r.p0},${r.p1},${r.s0},${r.s1},${r.v0},${r.v1}`).sort();
    expect(got).toEqual(
      [
        '0,0,0,0,apple,see,110,false',
        '0,1,0,0,banana,you,11.1,false',
        '1,0,0,0,car,later,12.2,true',
        '1,1,0,0,driver,!,13.3,false',
        '1,2,0,0,driver,!,13.3,false',
        '100,200,0,0,max,number,140.4,false',
        '0,1,0,1,zoo,you,130,false',
        '0,0,1,0,elephant,hi,120,false',
      ].sort(),
    );
  });
});
