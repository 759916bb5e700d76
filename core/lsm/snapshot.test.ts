import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { isCorruption } from './errors.ts';
import { BATCH_COMMIT_IDENTIFIER, parseJsonExact, snapshotFromJson, snapshotToJson, tagFromJson, tagToJson, type Snapshot } from './snapshot.ts';
import { PAIMON_FIXTURES, paimonFixturesAvailable } from './testing/shared.ts';

const FIX = PAIMON_FIXTURES;
const haveFixtures = paimonFixturesAvailable('the snapshot fixture tests');

const base: Snapshot = {
  version: 3,
  id: 7,
  schemaId: 0,
  baseManifestList: 'manifest-list-a-0',
  baseManifestListSize: 884,
  deltaManifestList: 'manifest-list-a-1',
  deltaManifestListSize: 998,
  changelogManifestList: null,
  changelogManifestListSize: null,
  indexManifest: null,
  commitUser: 'tilstand-1',
  commitIdentifier: BATCH_COMMIT_IDENTIFIER,
  commitKind: 'APPEND',
  timeMillis: 1756266933641,
  totalRecordCount: 9,
  deltaRecordCount: -2,
  changelogRecordCount: null,
  watermark: null,
  statistics: null,
  properties: null,
  nextRowId: null,
};

const expectCorruption = (f: () => unknown, msg: RegExp) => {
  try {
    f();
  } catch (e) {
    expect(isCorruption(e)).toBe(true);
    expect((e as Error).message).toMatch(msg);
    return;
  }
  throw new Error('expected a corruption');
};

describe('snapshot JSON', () => {
  it('writes the maximally compatible field set, Jackson-style, in Java property order', () => {
    expect(snapshotToJson(base)).toBe(`{
  "version" : 3,
  "id" : 7,
  "schemaId" : 0,
  "baseManifestList" : "manifest-list-a-0",
  "baseManifestListSize" : 884,
  "deltaManifestList" : "manifest-list-a-1",
  "deltaManifestListSize" : 998,
  "commitUser" : "tilstand-1",
  "commitIdentifier" : 9223372036854775807,
  "commitKind" : "APPEND",
  "timeMillis" : 1756266933641,
  "totalRecordCount" : 9,
  "deltaRecordCount" : -2
}`);
    expect(snapshotToJson(base, false)).toBe(
      '{"version":3,"id":7,"schemaId":0,"baseManifestList":"manifest-list-a-0","baseManifestListSize":884,"deltaManifestList":"manifest-list-a-1","deltaManifestListSize":998,"commitUser":"tilstand-1","commitIdentifier":9223372036854775807,"commitKind":"APPEND","timeMillis":1756266933641,"totalRecordCount":9,"deltaRecordCount":-2}',
    );
  });

  it('round-trips every field, with Long.MAX_VALUE / Long.MIN_VALUE exact', () => {
    const full: Snapshot = {
      ...base,
      changelogManifestList: 'manifest-list-a-2',
      changelogManifestListSize: 500,
      indexManifest: 'index-manifest-b-0',
      changelogRecordCount: 3,
      watermark: -9223372036854775808n,
      statistics: 'stat-c-0',
      properties: { k: 'v' },
      nextRowId: 0,
    };
    for (const pretty of [true, false]) {
      expect(snapshotFromJson(snapshotToJson(full, pretty), 'mem')).toEqual(full);
      expect(snapshotFromJson(snapshotToJson(base, pretty), 'mem')).toEqual(base);
    }
    expect(snapshotFromJson(snapshotToJson(full), 'mem').commitIdentifier).toBe(9223372036854775807n);
  });

  it('ignores unknown fields and defaults a missing version to 1', () => {
    const text = snapshotToJson(base).replace('"version" : 3,', '"logOffsets" : { }, "operation" : "WRITE", "uuid" : "u", "future" : [1, {"x": null}],');
    const s = snapshotFromJson(text, 'mem');
    expect(s.version).toBe(1);
    expect(s.id).toBe(7);
  });

  it('refuses bad JSON, missing required fields and wrong types as corruption', () => {
    expectCorruption(() => snapshotFromJson('{"id": 1,', 'snapshot-1'), /not JSON/);
    expectCorruption(() => snapshotFromJson('[1]', 'snapshot-1'), /JSON object/);
    expectCorruption(() => snapshotFromJson(snapshotToJson(base).replace(/"commitUser" : "tilstand-1",/, ''), 'snapshot-1'), /commitUser' is missing/);
    expectCorruption(() => snapshotFromJson(snapshotToJson(base).replace('"id" : 7', '"id" : "7"'), 'snapshot-1'), /'id' is not a safe integer/);
    expectCorruption(() => snapshotFromJson(snapshotToJson(base).replace('APPEND', 'MERGE'), 'snapshot-1'), /unknown value 'MERGE'/);
  });

  it('parses JSON like JSON.parse except for big integers', () => {
    const text = '{"a":[1,-2.5e3,"x\\"y\\u00e9",true,false,null],"b":{"c":-9223372036854775808},"d":12345678901234567890}';
    const v = parseJsonExact(text) as Record<string, unknown>;
    expect(v['a']).toEqual(JSON.parse(text).a);
    expect((v['b'] as Record<string, unknown>)['c']).toBe(-9223372036854775808n);
    expect(v['d']).toBe(12345678901234567890n);
    expect(() => parseJsonExact('{"a":1} x')).toThrow(SyntaxError);
  });
});

describe('tag JSON', () => {
  it('is the snapshot JSON when no TTL is given', () => {
    expect(tagToJson(base)).toBe(snapshotToJson(base));
    expect(tagFromJson(tagToJson(base), 'tag-t')).toEqual({ snapshot: base });
  });

  it('appends tagCreateTime as a LocalDateTime array and tagTimeRetained as decimal seconds', () => {
    const createTimeMillis = Date.UTC(2024, 0, 1, 12, 0, 0, 123);
    const text = tagToJson(base, { createTimeMillis, retainedMillis: 5000 });
    expect(text.endsWith(`  "deltaRecordCount" : -2,
  "tagCreateTime" : [ 2024, 1, 1, 12, 0, 0, 123000000 ],
  "tagTimeRetained" : 5.000000000
}`)).toBe(true);
    expect(tagFromJson(text, 'tag-t')).toEqual({ snapshot: base, createTimeMillis, retainedMillis: 5000 });
    const whole = tagToJson(base, { createTimeMillis: Date.UTC(2024, 0, 1, 12, 0), retainedMillis: 86_400_250 }, false);
    expect(whole).toContain('"tagCreateTime":[2024,1,1,12,0],"tagTimeRetained":86400.250000000}');
  });

  it('reads a Java-written TTL tag (nanosecond create time)', () => {
    const java = snapshotToJson(base).replace(/\n}$/, ',\n  "tagCreateTime" : [ 2024, 1, 1, 12, 0, 0, 123456789 ],\n  "tagTimeRetained" : 5.000000000\n}');
    const t = tagFromJson(java, 'tag-x');
    expect(t.createTimeMillis).toBe(Date.UTC(2024, 0, 1, 12, 0, 0, 123));
    expect(t.retainedMillis).toBe(5000);
    expectCorruption(() => tagFromJson(java.replace('[ 2024, 1, 1, 12, 0, 0, 123456789 ]', '"x"'), 'tag-x'), /tagCreateTime/);
  });
});

describe.skipIf(!haveFixtures)('snapshots written by Java Paimon', () => {
  it('reads every fixture snapshot and re-reads what we write from it', () => {
    const dirs = readdirSync(FIX).filter((d) => existsSync(`${FIX}/${d}/snapshot`));
    let n = 0;
    for (const d of dirs) {
      for (const f of readdirSync(`${FIX}/${d}/snapshot`).filter((x) => x.startsWith('snapshot-'))) {
        const p = `${FIX}/${d}/snapshot/${f}`;
        const s = snapshotFromJson(readFileSync(p, 'utf8'), p);
        expect(s.id).toBe(Number(f.slice('snapshot-'.length)));
        expect(snapshotFromJson(snapshotToJson(s), p)).toEqual(s);
        n++;
      }
    }
    expect(n).toBeGreaterThanOrEqual(14);
  });

  it('keeps the append fixture\'s Long.MAX_VALUE commit identifier exact', () => {
    const p = `${FIX}/java13-append-avro-datafiles-timestamps/snapshot/snapshot-1`;
    const s = snapshotFromJson(readFileSync(p, 'utf8'), p);
    expect(s.commitIdentifier).toBe(9223372036854775807n);
    expect(s).toMatchObject({ baseManifestListSize: 884, deltaManifestListSize: 985, totalRecordCount: 3, nextRowId: 0, changelogManifestList: null });
    expect(snapshotToJson(s)).toContain('"commitIdentifier" : 9223372036854775807,');
  });

  it('reads the mor fixture\'s COMPACT snapshot with a negative delta count', () => {
    const p = `${FIX}/java13-pk-parquet-mor-partitioned-2buckets/snapshot/snapshot-3`;
    const s = snapshotFromJson(readFileSync(p, 'utf8'), p);
    expect(s).toMatchObject({ id: 3, commitKind: 'COMPACT', deltaRecordCount: -1, totalRecordCount: 10, commitIdentifier: 2n });
  });
});
