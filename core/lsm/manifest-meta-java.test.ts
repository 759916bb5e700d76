// The per-manifest fields of a manifest list (ManifestFileMeta) as Java Paimon computes them when
// it writes a manifest: ManifestAvroWriter.FileWriter.collectStats (paimon-core/.../manifest/
// ManifestAvroWriter.java at 5dacde51, lines 462-486; the same in ManifestFile.java of 1.0.0
// lines 150-157 and 1.3.2 lines 195-211):
//   - `_SCHEMA_ID` is the largest `_SCHEMA_ID` of the data files its entries name
//     (`schemaId = Math.max(schemaId, entry.file().schemaId())`), not the writer's schema;
//   - `_PARTITION_STATS._NULL_COUNTS` counts entries, one per entry whose partition value is null
//     (`partitionStatsCollector.collect(entry.partition())` for every entry).
// Java's `$manifests` system table shows and filters by these (ManifestsTable: schema_id).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { deserializeBinaryRow } from './binary-row.ts';
import { Catalog } from './catalog.ts';
import type { Table } from './table.ts';
import { parseType } from './types.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function newTable(spec: Parameters<Catalog['createTable']>[1]): Table {
  const dir = mkdtempSync(join(tmpdir(), 'manifest-meta-'));
  dirs.push(dir);
  const catalog = new Catalog(dir);
  catalog.createDatabase('db');
  return catalog.createTable({ database: 'db', table: 't' }, spec);
}

/** The delta manifests of snapshot `id` with their entries. */
function deltaOf(table: Table, id: number) {
  const s = table.snapshots.get(id);
  return table.manifests.readList(s.deltaManifestList, s.deltaManifestListSize).map((m) => ({ meta: m, entries: table.manifests.readManifest(m) }));
}

describe('manifest list fields as Java writes them', () => {
  it("_SCHEMA_ID is the largest schema id of the manifest's files, not the table's schema after an ALTER", () => {
    const table = newTable({ fields: [{ name: 'id', type: 'INT NOT NULL' }, { name: 'v', type: 'STRING' }], primaryKeys: ['id'], options: { bucket: '1' } });
    let w = table.newWriter();
    w.writeRecord({ id: 1, v: 'a' });
    w.commit(); // 1
    w.writeRecord({ id: 2, v: 'b' });
    w.commit(); // 2
    w.close();
    table.alter([{ kind: 'addColumn', name: 'extra', type: 'INT' }]);
    expect(table.schema.id).toBe(1);
    w = table.newWriter();
    // An OVERWRITE snapshot whose delta removes snapshot 2's file, written under schema 0.
    const back = w.rollbackTo(1, { keepHistory: true });
    w.close();
    const delta = deltaOf(table, back.snapshotId);
    expect(delta.flatMap((d) => d.entries.map((e) => e.file.schemaId))).toEqual([0]);
    expect(delta.map((d) => d.meta.schemaId)).toEqual([0]);
  });

  it('_NULL_COUNTS of the partition stats counts every entry of a null partition', () => {
    // An append table: a primary key's partition columns are NOT NULL.
    const table = newTable({
      fields: [{ name: 'id', type: 'INT NOT NULL' }, { name: 'p', type: 'STRING' }, { name: 'v', type: 'INT' }],
      partitionKeys: ['p'],
      options: { bucket: '4', 'bucket-key': 'id' },
    });
    const w = table.newWriter();
    for (let id = 0; id < 16; id++) w.writeRecord({ id, p: null, v: id });
    w.writeRecord({ id: 0, p: 'x', v: 0 });
    w.commit();
    w.close();
    const [delta] = deltaOf(table, 1);
    const types = [parseType('STRING')];
    const nullEntries = delta!.entries.filter((e) => deserializeBinaryRow(types, e.partition, 'test')[0] === null).length;
    expect(nullEntries).toBeGreaterThan(1); // 16 keys over 4 buckets: more than one file in the null partition
    expect(delta!.entries.length).toBe(nullEntries + 1);
    expect(delta!.meta.partitionStats.nullCounts).toEqual([nullEntries]);
  });
});
