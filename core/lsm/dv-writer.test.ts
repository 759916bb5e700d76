// Writing deletion vectors (dv-writer.ts): a randomized model test read through the DV-aware
// reader (level ≥ 1 minus deleted positions, level 0 skipped), the index manifest and DV files
// decoded with the existing decoders, no committed snapshot with rows only in level 0, expiry
// keeping the index files of retained snapshots and tags, and paimon-check.

import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from './catalog.ts';
import { decodeDeletionVector } from './deletion-vector.ts';
import { RowKind } from './key-value.ts';
import { decodeIndexManifest } from './manifest.ts';
import { Table } from './table.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function newTable(options: Record<string, string> = {}): Table {
  const d = mkdtempSync(join(tmpdir(), 'lsm-dvw-'));
  dirs.push(d);
  const c = new Catalog(d);
  c.createDatabase('db');
  return c.createTable(
    { database: 'db', table: 't' },
    { fields: [{ name: 'p', type: 'INT' }, { name: 'k', type: 'INT' }, { name: 'v', type: 'STRING' }], partitionKeys: ['p'], primaryKeys: ['p', 'k'], options: { bucket: '2', 'deletion-vectors.enabled': 'true', 'snapshot.num-retained.min': '3', 'snapshot.num-retained.max': '4', ...options } },
  );
}

const sortRows = (rows: unknown[][]) => [...rows].sort((a, b) => (a[0] as number) - (b[0] as number) || (a[1] as number) - (b[1] as number));

/** Checks the latest snapshot: no rows only in level 0, index manifest and DV files decode. */
function checkLayout(t: Table): void {
  const s = t.latestSnapshot();
  if (!s) return;
  expect(t.manifests.liveFiles(s).filter((e) => e.file.level === 0)).toEqual([]);
  if (!s.indexManifest) return;
  const live = new Set(t.manifests.liveFiles(s).map((e) => e.file.fileName));
  const entries = decodeIndexManifest(t.fileIO.readFile(t.paths.manifestFile(s.indexManifest)), 'im');
  const buckets = new Set<string>();
  for (const e of entries) {
    expect(e.kind).toBe(0);
    expect(e.indexType).toBe('DELETION_VECTORS');
    const key = `${Buffer.from(e.partition).toString('hex')}/${e.bucket}`;
    expect(buckets.has(key)).toBe(false); // one DV file per bucket
    buckets.add(key);
    const bytes = t.fileIO.readFile(join(t.paths.root, 'index', e.fileName));
    expect(bytes.length).toBe(e.fileSize);
    for (const r of e.dvRanges!) {
      expect(live.has(r.dataFileName)).toBe(true); // vectors of removed files are dropped
      expect(decodeDeletionVector(bytes, r.offset, r.length, 'dv').length).toBe(r.cardinality);
    }
  }
}

describe('writing deletion vectors', () => {
  it('matches a model under random writes, deletes, commits, compactions, tags and reopen', () => {
    const seed = Number(process.env.DV_SEED ?? Date.now() % 1_000_000);
    console.log(`dv-writer model seed ${seed}`);
    let x = seed || 1;
    const rnd = (n: number) => {
      x = (x * 1103515245 + 12345) % 2147483648;
      return Math.floor((x / 2147483648) * n);
    };
    let t = newTable(rnd(2) ? { 'write-only': 'true' } : {});
    let w = t.newWriter();
    const model = new Map<string, unknown[]>();
    const committed = new Map<string, unknown[]>();
    const tags: Array<{ name: string; rows: unknown[][] }> = [];
    let dvSeen = false;
    for (let step = 0; step < 160; step++) {
      const op = rnd(20);
      if (op < 12) {
        const p = rnd(2);
        const k = rnd(40);
        if (rnd(4) === 0) {
          w.write([p, k, null], RowKind.DELETE);
          model.delete(`${p}/${k}`);
        } else {
          const row = [p, k, `s${step}`];
          w.write([...row]);
          model.set(`${p}/${k}`, row);
        }
        continue;
      }
      if (op < 16) w.commit();
      else if (op < 18) w.compact(rnd(2) === 0);
      else if (op === 18) {
        w.commit();
        const name = `tag${step}`;
        if (t.latestSnapshot()) {
          t.tags.create(name);
          tags.push({ name, rows: sortRows([...model.values()]) });
        }
      } else {
        w.commit();
        w.close();
        t = Table.open(t.paths.root);
        w = t.newWriter();
      }
      committed.clear();
      for (const [k, v] of model) committed.set(k, v);
      checkLayout(t);
      expect(sortRows(t.scanRows()), `seed ${seed} step ${step}`).toEqual(sortRows([...committed.values()]));
      dvSeen ||= !!t.latestSnapshot()?.indexManifest;
    }
    w.commit();
    w.compact(true);
    checkLayout(t);
    expect(sortRows(t.scanRows())).toEqual(sortRows([...model.values()]));
    for (const tag of tags) {
      const s = t.tags.get(tag.name)!.snapshot;
      expect(sortRows(t.scanRows({ tag: tag.name })), `seed ${seed} tag ${tag.name}`).toEqual(tag.rows);
      if (s.indexManifest) expect(existsSync(t.paths.manifestFile(s.indexManifest))).toBe(true);
    }
    w.close();
    expect(dvSeen).toBe(true);
  });

  it('marks an older row instead of rewriting it, and deletes without writing a row', () => {
    const t = newTable({ 'write-only': 'true', bucket: '1' });
    const w = t.newWriter();
    for (let k = 0; k < 10; k++) w.write([0, k, `a${k}`]);
    w.commit();
    w.compact(true); // into the top level
    const top = t.manifests.liveFiles(t.latestSnapshot()!).map((e) => e.file);
    expect(top.map((f) => f.level)).toEqual([t.schema.options.numLevels - 1]);
    w.write([0, 3, 'b3']);
    w.write([0, 5, null], RowKind.DELETE);
    w.commit();
    const files = t.manifests.liveFiles(t.latestSnapshot()!).map((e) => e.file);
    expect(files.find((f) => f.fileName === top[0]!.fileName)).toBeDefined(); // not rewritten
    const l1 = files.filter((f) => f.level === 1);
    expect(l1.map((f) => f.rowCount)).toEqual([1]); // the -D is not written
    const s = t.latestSnapshot()!;
    const [e] = decodeIndexManifest(t.fileIO.readFile(t.paths.manifestFile(s.indexManifest!)), 'im');
    const bytes = t.fileIO.readFile(join(t.paths.root, 'index', e!.fileName));
    expect(e!.fileName).toMatch(/^index-[0-9a-f-]+-\d+$/);
    expect(decodeDeletionVector(bytes, e!.dvRanges![0]!.offset, e!.dvRanges![0]!.length, 'dv')).toEqual([3, 5]);
    expect(sortRows(t.scanRows())).toEqual([0, 1, 2, 3, 4, 6, 7, 8, 9].map((k) => [0, k, k === 3 ? 'b3' : `a${k}`]));
    w.close();
  });

  it('expiry keeps the index files of retained snapshots and tags and removes the rest', () => {
    const t = newTable({ bucket: '1', 'snapshot.num-retained.min': '1', 'snapshot.num-retained.max': '1' });
    const w = t.newWriter();
    for (let k = 0; k < 20; k++) w.write([0, k, 'a']);
    w.commit();
    w.compact(true);
    w.write([0, 1, 'b']);
    w.commit();
    t.tags.create('keep');
    const tagged = t.tags.get('keep')!.snapshot.indexManifest!;
    for (let i = 0; i < 5; i++) {
      w.write([0, 2 + i, `c${i}`]);
      w.commit();
    }
    w.expire();
    const live = new Set<string>();
    for (const name of [tagged, t.latestSnapshot()!.indexManifest!]) {
      expect(existsSync(t.paths.manifestFile(name))).toBe(true);
      for (const e of decodeIndexManifest(t.fileIO.readFile(t.paths.manifestFile(name)), 'im')) live.add(e.fileName);
    }
    expect(new Set(readdirSync(join(t.paths.root, 'index')))).toEqual(live);
    expect(sortRows(Table.open(t.paths.root).scanRows())).toEqual(Array.from({ length: 20 }, (_, k) => [0, k, k === 1 ? 'b' : k >= 2 && k < 7 ? `c${k - 2}` : 'a']));
    w.close();
  });

  it('passes paimon-check', () => {
    const t = newTable();
    const w = t.newWriter();
    for (let k = 0; k < 50; k++) w.write([k % 2, k, `a${k}`]);
    w.commit();
    w.compact(true);
    for (let k = 0; k < 50; k += 3) w.write([k % 2, k, `b${k}`]);
    w.write([1, 7, null], RowKind.DELETE);
    w.commit();
    w.close();
    expect(t.latestSnapshot()!.indexManifest).not.toBeNull();
    let out: string;
    try {
      out = execFileSync('/work/shared/tools/paimon-check', [t.paths.root], { encoding: 'utf8' });
    } catch (e) {
      out = String((e as { stdout?: string }).stdout ?? e);
    }
    expect(out).toMatch(/paimon-check: 0 problems/);
  });
});
