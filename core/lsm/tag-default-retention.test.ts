// `tag.default-time-retained` (DESIGN.md, "Tags, expiration and cleanup"): a tag created without
// a retention takes the table's default, as Paimon's manual tag creation does
// (table/AbstractFileStoreTable.java:610-625 `createTag(name[, snapshotId])` passes
// `coreOptions().tagDefaultTimeRetained()`; utils/TagManager.java:128-175 writes `tagCreateTime`
// and `tagTimeRetained` only when a retention is given), and tag expiration honours it. Also the
// two option inconsistencies: `num-sorted-run.compaction-trigger` below 2 in a table Java made, and
// `file.compression.per.level` at creation against ALTER.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import { runTableCli } from './cli/table-cli.ts';
import { LsmError } from './errors.ts';
import { TableSchema, type SchemaSpec } from './schema.ts';
import { Table } from './table.ts';
import { runCli } from './testing/cli.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function freshDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'lsm-tag-default-'));
  dirs.push(d);
  return d;
}

const SPEC: SchemaSpec = {
  fields: [{ name: 'k', type: 'INT NOT NULL' }, { name: 'v', type: 'STRING' }],
  primaryKeys: ['k'],
  options: { bucket: '1' },
};

function refusal(f: () => unknown): LsmError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(LsmError);
    return e as LsmError;
  }
  throw new Error('expected a refusal');
}

/** A table in `dir` with one committed snapshot per entry of `rows`, opened with `clock`. */
function tableWith(dir: string, options: Record<string, string>, commits: number, clock: () => number): Table {
  const t = Table.create(dir, TableSchema.fromSpec({ ...SPEC, options: { ...SPEC.options, ...options } }, 0), { clock });
  const w = t.newWriter();
  for (let c = 0; c < commits; c++) {
    w.writeRecord({ k: c, v: `v${c}` });
    w.commit();
  }
  w.close();
  return t;
}

/** Sets options in schema-0 as a table Java made would have them (nothing here validates them on the way). */
function setJavaOptions(dir: string, options: Record<string, string>): void {
  const file = join(dir, 'schema', 'schema-0');
  const json = JSON.parse(readFileSync(file, 'utf8')) as { options: Record<string, string> };
  Object.assign(json.options, options);
  writeFileSync(file, JSON.stringify(json, null, 2));
}

describe('tag.default-time-retained', () => {
  it('a tag created without a retention takes it, written as Java writes it; an explicit one wins; null keeps the tag; expiration deletes it when its time has passed', () => {
    const dir = freshDir();
    let now = Date.UTC(2026, 0, 10, 12, 0, 0);
    const t = tableWith(dir, { 'tag.default-time-retained': '2 h' }, 3, () => now);
    expect(t.schema.options.tagDefaultTimeRetainedMs).toBe(7_200_000);

    const a = t.createTag('a', 1);
    expect(a.retainedMillis).toBe(7_200_000);
    expect(a.createTimeMillis).toBeDefined();
    // The tag file: the snapshot plus Java's Tag fields — LocalDateTime as an array, Duration as decimal seconds.
    const json = readFileSync(join(dir, 'tag', 'tag-a'), 'utf8');
    expect(json).toMatch(/"tagTimeRetained" : 7200\.000000000/);
    expect(JSON.parse(json).tagCreateTime).toEqual(expect.arrayContaining([2026, 1, 10]));
    const latest = t.createTag('latest');
    expect(latest.retainedMillis).toBe(7_200_000);
    expect(t.createTag('b', 2, 10 * 3_600_000).retainedMillis).toBe(10 * 3_600_000);
    const kept = t.createTag('hold', 2, null);
    expect(kept.retainedMillis).toBeUndefined();
    expect(readFileSync(join(dir, 'tag', 'tag-hold'), 'utf8')).not.toContain('tagTimeRetained');

    // Expiration judges the default retention as any other.
    now += 3 * 3_600_000;
    const w = t.newWriter();
    try {
      const r = w.expire();
      expect(r.expiredTags.sort()).toEqual(['a', 'latest']);
    } finally {
      w.close();
    }
    expect(t.listTags().map((x) => x.name).sort()).toEqual(['b', 'hold']);
  });

  it('a table Java made with it: a tag created here takes it; a zero default is refused naming the option', () => {
    const dir = freshDir();
    tableWith(dir, {}, 2, Date.now);
    setJavaOptions(dir, { 'tag.default-time-retained': '1 d' });
    const t = Table.open(dir);
    expect(t.createTag('nightly').retainedMillis).toBe(86_400_000);
    expect(Table.open(dir).listTags()[0]!.retainedMillis).toBe(86_400_000);

    setJavaOptions(dir, { 'tag.default-time-retained': '0 s' });
    const z = Table.open(dir);
    const e = refusal(() => z.createTag('zero'));
    expect(e.kind).toBe('InvalidArgument');
    expect(e.message).toMatch(/option 'tag.default-time-retained' is '0 s', expected a positive duration/);
    expect(z.createTag('zero', undefined, 60_000).retainedMillis).toBe(60_000);
  });

  it('is accepted when a table is created and by ALTER, checked for a positive duration either way', () => {
    const dir = freshDir();
    const t = tableWith(dir, { 'tag.default-time-retained': '7 d' }, 1, Date.now);
    expect(t.schema.options.raw['tag.default-time-retained']).toBe('7 d');
    for (const bad of ['0 s', 'soon']) {
      const e = refusal(() => TableSchema.fromSpec({ ...SPEC, options: { ...SPEC.options, 'tag.default-time-retained': bad } }, 0));
      expect(e.kind).toBe('InvalidArgument');
      expect(e.message).toMatch(/option 'tag.default-time-retained': expected a (positive )?duration/);
      expect(refusal(() => t.alter([{ kind: 'setOption', key: 'tag.default-time-retained', value: bad }])).message).toMatch(/option 'tag.default-time-retained'/);
    }
    t.alter([{ kind: 'setOption', key: 'tag.default-time-retained', value: '12 h' }]);
    expect(t.createTag('x').retainedMillis).toBe(12 * 3_600_000);
  });

  it('`table tag create` without --retain applies it and says so', async () => {
    const wh = freshDir();
    const cat = new Catalog(wh);
    cat.createDatabase('db');
    const t = cat.createTable({ database: 'db', table: 't' }, { ...SPEC, options: { ...SPEC.options, 'tag.default-time-retained': '3 d' } });
    const w = t.newWriter();
    w.writeRecord({ k: 1, v: 'one' });
    w.commit();
    w.close();
    const r = await runCli(runTableCli, ['tag', 'create', 'db.t', 'first', '--warehouse', wh]);
    expect(r.code, r.err).toBe(0);
    expect(r.out.trim()).toBe("created tag 'first' on snapshot 1, retained for 3d (the table's tag.default-time-retained)");
    const explicit = await runCli(runTableCli, ['tag', 'create', 'db.t', 'second', '--retain', '1h', '--warehouse', wh]);
    expect(explicit.out.trim()).toBe("created tag 'second' on snapshot 1, retained for 1h");
    const list = JSON.parse((await runCli(runTableCli, ['tags', 'db.t', '--json', '--warehouse', wh])).out) as Array<{ name: string; retainedMillis: number | null }>;
    expect(list.map((x) => [x.name, x.retainedMillis])).toEqual([['first', 3 * 86_400_000], ['second', 3_600_000]]);
  });
});

describe('num-sorted-run.compaction-trigger below 2 (Paimon checks no bound)', () => {
  it('a table Java made with trigger 1 opens, reads and is written: a bucket compacts whenever it has two runs, as Java\'s UniversalCompaction picks', () => {
    const dir = freshDir();
    tableWith(dir, {}, 1, Date.now);
    setJavaOptions(dir, { 'num-sorted-run.compaction-trigger': '1' });
    const t = Table.open(dir);
    expect(t.schema.options.compactionTrigger).toBe(1);
    expect(t.schema.options.numLevels).toBe(2);
    const w = t.newWriter();
    try {
      for (let c = 1; c < 6; c++) {
        w.writeRecord({ k: c, v: `v${c}` });
        w.writeRecord({ k: 0, v: `zero${c}` });
        w.commit();
        // UniversalCompaction.pick (mergetree/compact/UniversalCompaction.java:97-103): more runs than the trigger → runs − 1 + 1 of them, here all.
        expect(t.runsOf(t.buckets(t.resolve()!)[0]!.files).length, `commit ${c}`).toBe(1);
      }
    } finally {
      w.close();
    }
    expect(t.scanRows()).toEqual([[0, 'zero5'], [1, 'v1'], [2, 'v2'], [3, 'v3'], [4, 'v4'], [5, 'v5']]);
    // Created here too now (it was refused below 2).
    expect(TableSchema.fromSpec({ ...SPEC, options: { ...SPEC.options, 'num-sorted-run.compaction-trigger': '1' } }, 0).options.compactionTrigger).toBe(1);
  });

  it.each([['0'], ['-3']])('trigger %s: the table opens and reads; its writer is refused naming the option; creating one is refused', (trigger) => {
    const dir = freshDir();
    tableWith(dir, {}, 2, Date.now);
    setJavaOptions(dir, { 'num-sorted-run.compaction-trigger': trigger });
    const t = Table.open(dir);
    expect(t.scanRows()).toEqual([[0, 'v0'], [1, 'v1']]);
    const r = t.reader();
    try {
      expect(r.get({ k: 1 })).toEqual([1, 'v1']);
    } finally {
      r.close();
    }
    const e = refusal(() => t.newWriter());
    expect(e.kind).toBe('NotSupported');
    expect(e.message).toMatch(new RegExp(`option 'num-sorted-run.compaction-trigger' = '${trigger}' is not supported for writing \\(a compaction trigger below 1`));
    expect(e.message).toMatch(/the table can still be read here/);
    const c = refusal(() => TableSchema.fromSpec({ ...SPEC, options: { ...SPEC.options, 'num-sorted-run.compaction-trigger': trigger } }, 0));
    expect(c.kind).toBe('InvalidArgument');
    expect(c.message).toMatch(/option 'num-sorted-run.compaction-trigger': expected an integer in 1\.\./);
  });
});

describe('file.compression.per.level', () => {
  it('is accepted at creation as by ALTER (stored for Java writers), and its form is checked by both', () => {
    const dir = freshDir();
    const t = tableWith(dir, { 'file.compression.per.level': '0:lz4,1:zstd' }, 2, Date.now);
    expect(t.schema.options.raw['file.compression.per.level']).toBe('0:lz4,1:zstd');
    // This store writes every level with file.compression (snappy here); its files read back.
    expect(t.scanRows()).toEqual([[0, 'v0'], [1, 'v1']]);
    t.alter([{ kind: 'setOption', key: 'file.compression.per.level', value: '0:snappy' }]);
    expect(Table.open(dir).schema.options.raw['file.compression.per.level']).toBe('0:snappy');
    for (const bad of ['zero:lz4', '0=lz4', '0:']) {
      const c = refusal(() => TableSchema.fromSpec({ ...SPEC, options: { ...SPEC.options, 'file.compression.per.level': bad } }, 0));
      expect(c.kind).toBe('InvalidArgument');
      expect(c.message).toMatch(/option 'file.compression.per.level': expected 'level:codec,…' such as '0:lz4,1:zstd'/);
      expect(refusal(() => t.alter([{ kind: 'setOption', key: 'file.compression.per.level', value: bad }])).message).toMatch(/option 'file.compression.per.level': expected 'level:codec/);
    }
  });
});
