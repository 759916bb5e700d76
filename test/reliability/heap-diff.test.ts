// lib/heap-diff.ts on real heap snapshots: a child process takes one, grows a Map held by a named
// object and a linked list, makes garbage, takes another. The diff must put the growth under the
// objects that held it before (with the path to them), and must not count the garbage.

import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { removeTempDirs, tempDir } from './lib/common.ts';
import { diffHeaps, formatHeapDiff, loadHeapSnapshot } from './lib/heap-diff.ts';

afterAll(() => removeTempDirs());

const CHILD = `
import v8 from 'node:v8';
class Holder { constructor() { this.records = new Map(); } }
class LeakyRecord { constructor(i) { this.id = 'record-' + i; this.values = [i, i + 1, i + 2]; } }
class Link { constructor(n) { this.n = n; this.next = null; } }
class Garbage { constructor(i) { this.i = i; this.s = 'garbage-' + i; } }
globalThis.siteHolder = new Holder();
for (let i = 0; i < 10; i++) siteHolder.records.set(i, new LeakyRecord(i));
globalThis.chainHead = new Link(0);
v8.writeHeapSnapshot(process.argv[2]);
for (let i = 10; i < 5010; i++) siteHolder.records.set(i, new LeakyRecord(i));
let tail = chainHead;
for (let i = 1; i <= 20000; i++) { tail.next = new Link(i); tail = tail.next; }
let sink = 0;
for (let i = 0; i < 50000; i++) sink += new Garbage(i).s.length;
globalThis.sink = sink;
v8.writeHeapSnapshot(process.argv[3]);
`;

describe('heap-diff', () => {
  it('sums what grew under the objects that held it, with the path to them, and ignores garbage', () => {
    const dir = tempDir('heap-diff');
    const script = join(dir, 'child.mjs');
    writeFileSync(script, CHILD);
    const a = join(dir, 'a.heapsnapshot');
    const b = join(dir, 'b.heapsnapshot');
    const r = spawnSync(process.execPath, [script, a, b], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);

    const d = diffHeaps(loadHeapSnapshot(a), loadHeapSnapshot(b), 100);
    const kindsOf = (label: string) => d.holders.flatMap((h) => h.kinds.filter((k) => k.label === label).map((k) => ({ h, k })));
    /** The group holding most objects of a kind. (The last one made can still be in a stack slot when the snapshot is taken: it is then held by "(Stack roots)".) */
    const mainGroup = (label: string) => kindsOf(label).sort((x, y) => y.k.count - x.k.count)[0]!;
    const total = (label: string) => kindsOf(label).reduce((n, x) => n + x.k.count, 0);

    // The 5,000 new records: under the Map that Holder.records held before.
    const records = mainGroup('LeakyRecord');
    expect(total('LeakyRecord')).toBe(5000);
    expect(records.k.count).toBeGreaterThanOrEqual(4999);
    expect(records.h.holder).toBe('Map');
    expect(records.h.edge).toBe('table');
    expect(records.h.path).toEqual(['global.siteHolder', 'Holder.records']);

    // The 20,000 new links: under the old head's `next`, however long the chain.
    const links = mainGroup('Link');
    expect(total('Link')).toBe(20000);
    expect(links.k.count).toBeGreaterThanOrEqual(19999);
    expect(links.h.holder).toBe('Link');
    expect(links.h.edge).toBe('next');
    expect(links.h.path).toEqual(['global.chainHead']);

    // Collected garbage is not growth; what grew is at least the new objects' own sizes.
    expect(kindsOf('Garbage')).toHaveLength(0);
    expect(d.newCount).toBeGreaterThanOrEqual(25000);
    expect(d.newBytes).toBeGreaterThan(records.k.bytes + links.k.bytes);
    expect(d.totalBytes[1]).toBeGreaterThan(d.totalBytes[0]);
    expect(d.holders[0]!.holder).toBe('Map'); // the largest growth first

    const text = formatHeapDiff(d);
    expect(text).toMatch(/held by Map \.table\n +path: global\.siteHolder > Holder\.records/);
    expect(text).toMatch(/LeakyRecord 4999|LeakyRecord 5000/);
  });

  it('refuses a file that is not a heap snapshot, naming it', () => {
    const dir = tempDir('heap-diff-bad');
    const bad = join(dir, 'x.heapsnapshot');
    writeFileSync(bad, '{"nodes": [1, 2');
    expect(() => loadHeapSnapshot(bad)).toThrow(`${bad}: not a heap snapshot`);
    writeFileSync(bad, '{"nodes": []}');
    expect(() => loadHeapSnapshot(bad)).toThrow(/no snapshot\.meta/);
  });
});
