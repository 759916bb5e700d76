// A tag file made by hand on disk (`tag/tag-<name>`) may carry a name `checkName` refuses for a tag
// created here ('..' inside it, a leading dot, a backslash, a control character). It is a tag all
// the same, as to Java's TagManager, which lists `tag-*` files: it keeps its snapshot's files, and
// expiration deletes it when its retention has passed, as a rollback does when its snapshot is
// rolled away. Before, both threw InvalidArgument from the name check meant for callers' names,
// so one such file stopped every expiration of the table.
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { runTableCli } from './cli/table-cli.ts';
import { TableSchema } from './schema.ts';
import { Table } from './table.ts';
import { runCli } from './testing/cli.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const HOUR = 3_600_000;
const BAD_NAMES = ['a..b', '.hidden', 'a\\b', 'tab\there'];

/** A table with snapshots 1..3, each of one row, opened on a clock the test moves. */
function tableOfThree(options: Record<string, string> = {}): { t: Table; dir: string; now: { ms: number } } {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-tag-unchecked-'));
  dirs.push(dir);
  const now = { ms: Date.UTC(2026, 0, 1) };
  const t = Table.create(dir, TableSchema.fromSpec({ fields: [{ name: 'k', type: 'INT NOT NULL' }], primaryKeys: ['k'], options: { bucket: '1', 'write-only': 'true', ...options } }, 0), { clock: () => now.ms });
  const w = t.newWriter();
  for (let k = 1; k <= 3; k++) {
    w.writeRecord({ k });
    w.commit();
  }
  w.close();
  return { t, dir, now };
}

/** The keys at the latest snapshot, or at tag `tag`. */
function keys(t: Table, tag?: string): unknown[] {
  const r = t.reader(tag === undefined ? {} : { tag });
  try {
    return [...r.scan()].map((row) => row[0]);
  } finally {
    r.close();
  }
}

/** Copies tag `from` to the hand-made name `to`. */
function handMade(dir: string, from: string, to: string): void {
  copyFileSync(join(dir, 'tag', `tag-${from}`), join(dir, 'tag', `tag-${to}`));
}

it.each(BAD_NAMES)('expiration deletes the expired hand-made tag %j and keeps going', (bad) => {
  const { t, dir, now } = tableOfThree({ 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '1' });
  t.createTag('src', 1, HOUR);
  handMade(dir, 'src', bad);
  t.deleteTag('src');
  now.ms += 2 * HOUR;
  const w = t.newWriter();
  try {
    const r = w.expire();
    expect(r.expiredTags).toEqual([bad]);
    expect(r.expiredSnapshots).toEqual([1, 2]);
  } finally {
    w.close();
  }
  expect(readdirSync(join(dir, 'tag'))).toEqual([]);
  expect(keys(t)).toEqual([1, 2, 3]);
});

it('a hand-made tag still in its retention keeps its snapshot readable after the snapshot expires', () => {
  const { t, dir } = tableOfThree({ 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '1' });
  t.createTag('src', 1);
  handMade(dir, 'src', 'a..b');
  t.deleteTag('src');
  const w = t.newWriter();
  try {
    expect(w.expire().expiredSnapshots).toEqual([1, 2]);
  } finally {
    w.close();
  }
  expect(t.listTags().map((x) => x.name)).toEqual(['a..b']);
  // Its files were kept: the tag's snapshot reads through a tag of its own.
  t.createTag('good', 1);
  expect(keys(t, 'good')).toEqual([1]);
});

it('a rollback past a hand-made tag removes it', () => {
  const { t, dir } = tableOfThree();
  t.createTag('src', 3);
  handMade(dir, 'src', 'a..b');
  t.deleteTag('src');
  const w = t.newWriter();
  try {
    expect(w.rollbackTo(1).removedTags).toEqual(['a..b']);
  } finally {
    w.close();
  }
  expect(readdirSync(join(dir, 'tag'))).toEqual([]);
  expect(keys(t)).toEqual([1]);
});

it.each(BAD_NAMES)('tag delete removes the hand-made tag %j by the name the listing shows', (bad) => {
  const { t, dir } = tableOfThree();
  t.createTag('src', 2);
  handMade(dir, 'src', bad);
  t.deleteTag('src');
  const shown = t.listTags().map((x) => x.name);
  expect(shown).toEqual([bad]);
  t.deleteTag(shown[0]!);
  expect(readdirSync(join(dir, 'tag'))).toEqual([]);
  expect(t.listTags()).toEqual([]);
  // Gone, the name is again one only a listing could vouch for.
  expect(() => t.deleteTag(bad)).toThrow(expect.objectContaining({ kind: 'InvalidArgument' }));
});

it('tag delete never reaches outside tag/: a name with a separator or .. is refused and no file goes', () => {
  const { t, dir } = tableOfThree();
  t.createTag('keep', 2);
  writeFileSync(join(dir, 'victim'), 'x');
  for (const name of ['x/../../victim', '../victim', 'x/../../tag/tag-keep', '..']) {
    expect(() => t.deleteTag(name), name).toThrow(expect.objectContaining({ kind: 'InvalidArgument' }));
  }
  expect(existsSync(join(dir, 'victim'))).toBe(true);
  expect(t.listTags().map((x) => x.name)).toEqual(['keep']);
});

it.each(BAD_NAMES)('the hand-made tag %j is read by the name the listing shows (scan, changes, rollback)', (bad) => {
  const { t, dir } = tableOfThree();
  t.createTag('src', 2);
  handMade(dir, 'src', bad);
  t.deleteTag('src');
  const shown = t.listTags().map((x) => x.name);
  expect(shown).toEqual([bad]);
  expect(keys(t, shown[0])).toEqual([1, 2]);
  expect(t.resolve({ tag: shown[0]! })?.id).toBe(2);
  // As the start of an incremental read and a rollback target too.
  expect([...t.changes({ from: shown[0]!, to: 3 })].map((c) => c.row[0])).toEqual([3]);
  const w = t.newWriter();
  try {
    expect(w.rollbackTo(shown[0]!).snapshotId).toBe(2);
  } finally {
    w.close();
  }
  expect(keys(t)).toEqual([1, 2]);
});

it('a read at a tag never reaches outside tag/: a name with a separator or .. that no tag file has is refused', () => {
  const { t, dir } = tableOfThree();
  t.createTag('keep', 2);
  for (const name of ['../snapshot/snapshot-1', 'x/../../tag/tag-keep', '..', 'a..b']) {
    expect(() => t.resolve({ tag: name }), name).toThrow(expect.objectContaining({ kind: 'InvalidArgument' }));
  }
  expect(readdirSync(join(dir, 'tag'))).toEqual(['tag-keep']);
});

it('tilstand table scan --tag reads a hand-made tag by the name `tags` shows', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'lsm-tag-unchecked-cli-'));
  dirs.push(dir);
  const W = ['--warehouse', join(dir, 'wh')];
  const schema = join(dir, 'schema.json');
  writeFileSync(schema, JSON.stringify({ fields: [{ name: 'k', type: 'INT NOT NULL' }], primaryKeys: ['k'], options: { bucket: '1' } }));
  expect((await runCli(runTableCli, ['create', 'd.t', '--schema', schema, ...W])).code).toBe(0);
  expect((await runCli(runTableCli, ['put', 'd.t', ...W], '{"k":1}')).code).toBe(0);
  expect((await runCli(runTableCli, ['tag', 'create', 'd.t', 'src', ...W])).code).toBe(0);
  expect((await runCli(runTableCli, ['put', 'd.t', ...W], '{"k":2}')).code).toBe(0);
  const tagDir = join(dir, 'wh', 'd.db', 't', 'tag');
  copyFileSync(join(tagDir, 'tag-src'), join(tagDir, 'tag-a..b'));
  expect((await runCli(runTableCli, ['tag', 'delete', 'd.t', 'src', ...W])).code).toBe(0);
  expect((await runCli(runTableCli, ['tags', 'd.t', ...W])).out).toContain('a..b');
  expect(await runCli(runTableCli, ['scan', 'd.t', '--tag', 'a..b', ...W])).toMatchObject({ code: 0, err: '', out: '{"k":1}\n' });
});
