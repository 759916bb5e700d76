// A destructive rollback to a tag whose snapshot has expired writes that snapshot back from the tag,
// and is refused (NotFound) when a file of it is gone. Before, the tags of later snapshots were
// deleted first: the refused rollback left the table as it was but without them (and their files
// went at the next expiration).
import { readdirSync, mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { TableSchema } from './schema.ts';
import { Table } from './table.ts';
import { thrownLsmError } from './testing/corruption.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const dataFiles = (dir: string): string[] => readdirSync(join(dir, 'bucket-0')).filter((n) => n.startsWith('data-'));

it('a rollback refused because the tag\'s snapshot lost a file keeps every tag', () => {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-rollback-refused-'));
  dirs.push(dir);
  const options = { bucket: '1', 'write-only': 'true', 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '2' };
  const t = Table.create(dir, TableSchema.fromSpec({ fields: [{ name: 'k', type: 'INT NOT NULL' }], primaryKeys: ['k'], options }, 0));
  const w = t.newWriter();
  w.writeRecord({ k: 1 });
  w.commit();
  t.createTag('one', 1);
  const [onlyTagged] = dataFiles(dir); // after the full compaction below, only tag 'one' names it
  w.writeRecord({ k: 2 });
  w.commit();
  w.compact(true);
  w.writeRecord({ k: 3 });
  w.commit();
  t.createTag('late', 4);
  expect(w.expire().expiredSnapshots).toEqual([1, 2]);
  unlinkSync(join(dir, 'bucket-0', onlyTagged!));

  const e = thrownLsmError(() => w.rollbackTo('one'));
  expect([e.kind, e.message]).toEqual(['NotFound', expect.stringMatching(/cannot restore snapshot 1: its file .* is gone/)]);
  expect(t.listTags().map((x) => x.name)).toEqual(['one', 'late']);
  expect(t.latestSnapshot()!.id).toBe(4);
  w.expire();
  w.close();
  expect(t.scanRows({ tag: 'late' }).map((r) => r[0])).toEqual([1, 2, 3]);
});
