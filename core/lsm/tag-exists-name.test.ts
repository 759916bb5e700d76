// `TagManager.exists(name)` answers for tag names only: a name `checkName` refuses is a tag only when
// `tag/` holds a file of exactly that name (a hand-made tag the listing shows). Before, the name was
// joined into the tag path unchecked, so `/../../snapshot/snapshot-1` answered whether a snapshot
// file exists, and a caller that guards `get` with `exists` (Table's snapshot reference, an agent's
// `changesSince`) then threw from `get` instead of taking the name as no tag.
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { TableSchema } from './schema.ts';
import { Table } from './table.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function table(): { t: Table; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-tag-exists-'));
  dirs.push(dir);
  const t = Table.create(dir, TableSchema.fromSpec({ fields: [{ name: 'k', type: 'INT NOT NULL' }], primaryKeys: ['k'], options: { bucket: '1', 'write-only': 'true' } }, 0));
  const w = t.newWriter();
  w.writeRecord({ k: 1 });
  w.commit();
  w.close();
  t.createTag('t1', 1);
  return { t, dir };
}

it('a name leading out of tag/ is no tag, whatever file it names', () => {
  const { t } = table();
  for (const name of ['/../../snapshot/snapshot-1', '/../../schema/schema-0', '/../tag-t1', '../snapshot/snapshot-1', 'x/../../tag/tag-t1']) {
    expect(t.tags.exists(name), name).toBe(false);
  }
  expect(t.tags.exists('t1')).toBe(true);
  expect(t.tags.exists('t2')).toBe(false);
});

it('a hand-made tag file of a name checkName refuses still exists by that name', () => {
  const { t, dir } = table();
  copyFileSync(join(dir, 'tag', 'tag-t1'), join(dir, 'tag', 'tag-a..b'));
  expect(t.tags.exists('a..b')).toBe(true);
  expect(t.tags.exists('.hidden')).toBe(false);
  expect(t.tags.get('a..b').snapshot.id).toBe(1);
});

it('a non-string name is no tag', () => {
  const { t } = table();
  expect(t.tags.exists(undefined as unknown as string)).toBe(false);
  expect(t.tags.exists(1 as unknown as string)).toBe(false);
});
