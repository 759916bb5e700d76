// Paimon's TagManager refuses a tag name of whitespace only (utils/TagManager.java createTag:
// `checkArgument(!StringUtils.isNullOrWhitespaceOnly(tagName), "Tag name shouldn't be blank.")`,
// whitespace as Java's Character.isWhitespace). Such a tag was made here, and Java could then not
// name it. Refused at create only: one an earlier version made is still read and deleted.
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

function tableWithASnapshot(): { t: Table; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-tag-blank-'));
  dirs.push(dir);
  const t = Table.create(dir, TableSchema.fromSpec({ fields: [{ name: 'k', type: 'INT NOT NULL' }], primaryKeys: ['k'], options: { bucket: '1' } }, 0));
  const w = t.newWriter();
  w.writeRecord({ k: 1 });
  w.commit();
  w.close();
  return { t, dir };
}

it.each([' ', '   ', '\u3000', ' \u2028\u2029\u2003'])('refuses to create the whitespace-only tag name %j', (name) => {
  const { t } = tableWithASnapshot();
  expect(() => t.createTag(name, 1)).toThrow(/^tag name .* is blank/s);
  expect(t.tags.list()).toEqual([]);
});

it('creates a tag with other characters around its spaces, or of no-break spaces (not whitespace to Java)', () => {
  const { t } = tableWithASnapshot();
  for (const n of [' v1 ', 'a b', '\u00a0', '\u2007\u202f']) t.createTag(n, 1);
  expect(t.tags.list().map((x) => x.name).sort()).toEqual([' v1 ', 'a b', '\u00a0', '\u2007\u202f'].sort());
});

it('a blank-named tag made before the refusal is still read and deleted', () => {
  const { t, dir } = tableWithASnapshot();
  t.createTag('a', 1);
  copyFileSync(join(dir, 'tag', 'tag-a'), join(dir, 'tag', 'tag- '));
  expect(t.tags.get(' ').snapshot.id).toBe(1);
  t.deleteTag(' ');
  expect(t.tags.list().map((x) => x.name)).toEqual(['a']);
});
