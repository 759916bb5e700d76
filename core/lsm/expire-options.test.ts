// Table.expireUnderLock applies the writer's option check (write-options.ts checkWritableOptions)
// as every other path that changes a table does: a table Java made whose options a writer here
// would not honour is not expired here either. The case that makes it matter: a changelog kept
// longer than its snapshots ('changelog.num-retained.*' / 'changelog.time-retained' above the
// snapshots'). Java keeps an expiring snapshot's changelog (changelog/changelog-N and its files);
// expiration here deletes the changelog files with their snapshot — files a correct writer keeps.

import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LsmError } from './errors.ts';
import { TableSchema, type SchemaSpec } from './schema.ts';
import { Table } from './table.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const SPEC: SchemaSpec = {
  fields: [{ name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'STRING' }],
  primaryKeys: ['k'],
  options: { bucket: '1', 'changelog-producer': 'input', 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '2', 'write-only': 'true' },
};

/** Five commits of an `input`-changelog table (write-only: nothing expires yet), then `options` added in a `schema-1` as Java would leave it. */
function javaTable(options: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-expire-options-'));
  dirs.push(dir);
  const t = Table.create(dir, TableSchema.fromSpec(SPEC, 0));
  const w = t.newWriter();
  for (let c = 0; c < 5; c++) {
    w.writeRecord({ k: c, v: `v${c}` });
    w.commit();
  }
  w.close();
  const json = JSON.parse(readFileSync(join(dir, 'schema', 'schema-0'), 'utf8')) as { id: number; options: Record<string, string> };
  json.id = 1;
  json.options = { ...json.options, ...options };
  writeFileSync(join(dir, 'schema', 'schema-1'), JSON.stringify(json, null, 2));
  return dir;
}

const changelogFiles = (dir: string): string[] => readdirSync(join(dir, 'bucket-0')).filter((f) => f.startsWith('changelog-')).sort();
const snapshotFiles = (dir: string): string[] => readdirSync(join(dir, 'snapshot')).filter((f) => f.startsWith('snapshot-')).sort();

describe('expireUnderLock and the options a writer refuses', () => {
  it("a changelog kept longer than its snapshots: refused naming the option, no snapshot and no changelog file deleted", () => {
    const dir = javaTable({ 'changelog.num-retained.max': '10' });
    const changelogs = changelogFiles(dir);
    expect(changelogs.length).toBe(5);
    expect(snapshotFiles(dir).length).toBe(5);
    const t = Table.open(dir);
    let error: unknown;
    try {
      t.expireUnderLock();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(LsmError);
    expect((error as LsmError).kind).toBe('NotSupported');
    expect((error as LsmError).message).toMatch(/expiring table .*option 'changelog.num-retained.max' = '10' is not supported for writing/);
    expect(changelogFiles(dir)).toEqual(changelogs);
    expect(snapshotFiles(dir).length).toBe(5);
    // The changelog still reads from the first snapshot on.
    expect([...t.changes({ from: 0, to: 5, mode: 'changelog' })].length).toBe(5);
  });

  it('a table the writer accepts is expired as before: the snapshots beyond the retention and their changelog files go', () => {
    const dir = javaTable({ 'write-only': 'false' });
    const r = Table.open(dir).expireUnderLock();
    expect(r.expiredSnapshots).toEqual([1, 2, 3]);
    expect(snapshotFiles(dir)).toEqual(['snapshot-4', 'snapshot-5']);
    expect(changelogFiles(dir).length).toBe(2);
  });
});
