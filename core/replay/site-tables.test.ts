// A table of the site's own (config.json `tables` entry with `columns`; core/ingest site-tables.ts)
// in a fixture and its replay: the export counts it among the ingest tables (its snapshot at the cut
// may hold fewer events than the seed tables', and the fixture's events start after the lowest; one
// made after the cut does not lower that, one made before it with no snapshot yet starts them at 0),
// the fixture's config/budgets.json carries its definition, and the replay makes it in the scratch
// warehouse and ingests the period's yard events into it as the site did. A fixture whose
// definition no longer fits the table's files at the cut is refused, naming the table.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Journal } from '../ingest/journal.ts';
import { POSITION_PROPERTY } from '../ingest/progress.ts';
import { YARD_BINDING, YARD_CONTRACT, YARD_DOORS } from '../ingest/test-support/yard-doors.ts';
import { Catalog, Table, valueToJson } from '../lsm/index.ts';
import { DemoEvents, type DemoEvent } from './demo-events.ts';
import { exportFixture, makeCut } from './export.ts';
import type { FixtureManifest } from './fixture.ts';
import { defaultScratchParent, runReplay } from './replay.ts';
import { LiveSite, replayCli, T0 } from './test-support.ts';

const MIN = 60_000;

const CONTRACT = YARD_CONTRACT;

// A budget of two minutes (a table commits when its oldest pending event is half its budget old):
// the yard event 40 s before the cut is still pending in yard_doors at the cut, while the seed
// tables (budgets of 5–15 s) and dead_letters (its progress commit, every 5 min) have gone past it.
const DOORS = { ...YARD_DOORS, budgetMs: 120_000 };

const BINDING = YARD_BINDING;

const door = (atMs: number, seq: number, id: string, state: string): DemoEvent => ({
  topic: 'tilstand/s1/events/yard/doors',
  payload: Buffer.from(JSON.stringify({ op: 'u', before: null, after: { door_id: id, state }, source: { module: 'yard', stream: 'doors', seq }, ts_ms: atMs, contract: { name: 'yard.doors', version: 1 } })),
  atMs,
});

// Before the cut: two doors committed, one change still pending (received 40 s before the cut).
const CUT = T0 + 5 * MIN + 10_000;
const UNTIL = CUT + 3 * MIN;
const YARD = [door(T0 + 2_000, 1, 'D-01', 'free'), door(T0 + 3_000, 2, 'D-02', 'occupied'), door(CUT - 40_000, 3, 'D-01', 'occupied'), door(CUT + 30_000, 4, 'D-03', 'down'), door(CUT + 60_000, 5, 'D-02', 'free')];

/** A table's rows (latest snapshot, or at `tag`) in key order, as JSON values. */
function rowsOf(t: Table, tag?: string): Record<string, unknown>[] {
  return t.scanRows(tag ? { tag } : {}).map((row) => Object.fromEntries(t.schema.fields.map((f, i) => [f.name, valueToJson(f.type, row[i])])));
}

/** The yard events in a fixture's events (NDJSON text), as [position, seq, door, state]. */
function yardEvents(lines: string): [bigint, number, string, string][] {
  return lines
    .split('\n')
    .filter((l) => l.length > 0)
    .map((l) => JSON.parse(l) as { p: string; topic: string; payload: string })
    .filter((e) => e.topic.endsWith('/yard/doors'))
    .map((e) => [BigInt(e.p), JSON.parse(e.payload) as { after: { door_id: string; state: string }; source: { seq: number } }] as const)
    .map(([p, e]) => [p, e.source.seq, e.after.door_id, e.after.state]);
}
const fixtureEvents = (fixture: string) => gunzipSync(readFileSync(join(fixture, 'events.ndjson.gz'))).toString('utf8');

let live: LiveSite;
let work: string;
let fixture: string;
let manifest: FixtureManifest;
let liveDoors: Record<string, unknown>[];

beforeAll(async () => {
  work = mkdtempSync(join(defaultScratchParent(), 'tilstand-replay-site-tables-test-'));
  live = new LiveSite({ own: { tables: [DOORS], bindings: [BINDING], contracts: [CONTRACT] } });
  const gen = new DemoEvents({ site: live.site, seed: 11 });
  live.receive([...gen.initial(T0 + 100), ...YARD.slice(0, 2)].sort((a, b) => a.atMs - b.atMs));
  const demo: DemoEvent[] = [];
  for (let i = 0; i < 500; i++) demo.push(...gen.step(T0 + 1000 + i * 1000));
  live.receive([...demo, ...YARD.slice(2)].sort((a, b) => a.atMs - b.atMs));
  await live.advance(CUT);
  makeCut(live.catalog, live.database, 'replay-yard', { clock: live.clock });
  await live.advance(UNTIL);
  live.ingestor.commitAll();
  liveDoors = rowsOf(live.catalog.getTable({ database: live.database, table: 'yard_doors' }));
  live.close();
  fixture = join(work, 'fixture');
  manifest = await exportFixture({ data: live.dir, tag: 'yard', untilMs: UNTIL, out: fixture });
}, 120_000);

afterAll(() => {
  live?.remove();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("a table of the site's own in a replay", () => {
  it('is in the fixture at the cut, with the yard events after its own position, and its definition', () => {
    expect(liveDoors).toEqual([
      { door_id: 'D-01', state: 'occupied', yard_seq: 3 },
      { door_id: 'D-02', state: 'free', yard_seq: 5 },
      { door_id: 'D-03', state: 'down', yard_seq: 4 },
    ]);
    // At the cut yard_doors held seq 1 and 2; seq 3 was pending, and the seed tables had gone past it.
    const doors = manifest.tables.yard_doors!;
    expect(doors.snapshotId).not.toBeNull();
    const t = Table.open(join(fixture, 'warehouse', 'site_s1.db', 'yard_doors'));
    expect(rowsOf(t, 'replay-yard')).toEqual([
      { door_id: 'D-01', state: 'free', yard_seq: 1 },
      { door_id: 'D-02', state: 'occupied', yard_seq: 2 },
    ]);
    // The events start after the lowest position of every ingest table, yard_doors' included (was:
    // after the seed tables' lowest, which had passed seq 3: the replay never saw it).
    expect(manifest.events.afterPosition).toBe(doors.journalPosition);
    const events = yardEvents(fixtureEvents(fixture));
    expect(events.map(([, ...e]) => e)).toEqual([
      [3, 'D-01', 'occupied'],
      [4, 'D-03', 'down'],
      [5, 'D-02', 'free'],
    ]);
    // The case this is about: every other ingest table had committed seq 3's position at the cut.
    const seq3 = events[0]![0];
    for (const n of ['work_queue', 'resources', 'stock', 'dead_letters']) expect(BigInt(manifest.tables[n]!.journalPosition!), n).toBeGreaterThanOrEqual(seq3);
    const budgets = JSON.parse(readFileSync(join(fixture, 'config', 'budgets.json'), 'utf8')) as { table: string }[];
    expect(budgets.find((b) => b.table === 'yard_doors')).toEqual(DOORS);
    const bindings = JSON.parse(readFileSync(join(fixture, 'config', 'bindings.json'), 'utf8')) as { table: string }[];
    expect(bindings.filter((b) => b.table === 'yard_doors')).toEqual([BINDING]);
  });

  it('replays the yard events into yard_doors in the scratch warehouse, as live, without dead letters', async () => {
    let scratch = '';
    // Was: "budget for table 'yard_doors', which is not among the tables" (the replay's Ingestor knew the seed tables only).
    const r = await runReplay({ fixture, out: join(work, 'run'), keepScratch: true, onScratch: (d) => void (scratch = d) });
    try {
      expect(r.manifest.ingestFailure).toBeNull();
      expect(r.manifest.counts.deadLettersOpen).toBe(0);
      expect(r.manifest.counts.events).toBe(manifest.events.count);
      const t = new Catalog(join(scratch, 'warehouse')).getTable({ database: 'site_s1', table: 'yard_doors' });
      expect(rowsOf(t)).toEqual(liveDoors);
      expect(t.schema.comment).toBe(DOORS.comment);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }, 60_000);

  it("is refused when the fixture's definition no longer fits the table's files, naming the table", async () => {
    // config.json changed after the table was made (state STRING → INT), exported before any start
    // could refuse it: the fixture's budgets.json no longer fits yard_doors at the cut.
    const configFile = join(live.dir, 'config.json');
    const config = JSON.parse(readFileSync(configFile, 'utf8')) as { tables: { table: string; columns?: { name: string; type: string }[] }[] };
    const doors = config.tables.find((t) => t.table === 'yard_doors')!;
    doors.columns = doors.columns!.map((c) => (c.name === 'state' ? { name: 'state', type: 'INT' } : c));
    writeFileSync(configFile, JSON.stringify(config, null, 2));
    const changed = join(work, 'changed');
    await exportFixture({ data: live.dir, tag: 'yard', untilMs: UNTIL, out: changed });
    const at = config.tables.indexOf(doors);
    await expect(runReplay({ fixture: changed, out: join(work, 'run-changed') })).rejects.toThrow(
      new RegExp(`^fixture config/budgets\\.json: tables\\[${at}\\]: table 'yard_doors' exists with columns \\(door_id STRING NOT NULL, state STRING, yard_seq BIGINT\\) and differs from its definition: column 'state' is STRING in the table and INT in the definition`),
    );
    const cli = await replayCli(['replay', 'run', '--fixture', changed, '--out', join(work, 'run-changed-cli')]);
    expect(cli.code).toBe(5);
    expect(cli.err).toContain(`tilstand: fixture config/budgets.json: tables[${at}]: table 'yard_doors' exists`);
  }, 60_000);
});

describe("a table of the site's own made after the cut", () => {
  it("does not start the fixture's events at position 0: the export runs on a pruned journal, and so does the replay", async () => {
    // The site ran without yard_doors, was cut, and was started again a minute later with
    // yard_doors defined in config.json (the yard module publishing from then on): at the cut the
    // table did not exist. Then the journal was pruned up to the cut, as a site's retention does.
    const first = new LiveSite();
    let again: LiveSite | undefined;
    const out = join(work, 'made-after');
    try {
      const gen = new DemoEvents({ site: first.site, seed: 12 });
      first.receive(gen.initial(T0 + 100));
      const demo: DemoEvent[] = [];
      for (let i = 0; i < 300; i++) demo.push(...gen.step(T0 + 1000 + i * 1000));
      first.receive(demo);
      await first.advance(CUT);
      makeCut(first.catalog, first.database, 'replay-later', { clock: first.clock });
      first.close();
      const restart = CUT + MIN;
      const until = restart + 3 * MIN;
      again = new LiveSite({ dir: first.dir, startMs: restart, own: { tables: [DOORS], bindings: [BINDING], contracts: [CONTRACT] } });
      const later: DemoEvent[] = [door(restart + 30_000, 1, 'D-02', 'occupied'), door(restart + 60_000, 2, 'D-01', 'occupied')];
      for (let i = 0; i < 150; i++) later.push(...gen.step(restart + 1000 + i * 1000));
      again.receive(later.sort((a, b) => a.atMs - b.atMs));
      await again.advance(until);
      again.ingestor.commitAll();
      const doorsLive = rowsOf(again.catalog.getTable({ database: again.database, table: 'yard_doors' }));
      again.close();

      // The seed tables' lowest position at the cut; the journal keeps only what comes after it.
      const tagged = (n: string) => BigInt(Table.open(join(first.dir, 'warehouse', 'site_s1.db', n)).tags.get('replay-later').snapshot.properties?.[POSITION_PROPERTY] ?? '');
      const lowest = ['work_queue', 'resources', 'stock', 'dead_letters'].map(tagged).reduce((a, b) => (b < a ? b : a));
      expect(lowest).toBeGreaterThan(1n);
      const j = Journal.open(first.dir);
      try {
        await j.prune({ maxAgeMs: 0, keepAfter: lowest });
      } finally {
        j.close();
      }

      // Was: yard_doors (no snapshot at the cut) counted as position 0, and the export was refused
      // ("the journal no longer holds position 1").
      const m = await exportFixture({ data: first.dir, tag: 'later', untilMs: until, out });
      expect(m.tables.yard_doors).toMatchObject({ snapshotId: null, journalPosition: null });
      expect(m.events.afterPosition).toBe(String(lowest));
      expect(yardEvents(fixtureEvents(out)).map(([, ...e]) => e)).toEqual([
        [1, 'D-02', 'occupied'],
        [2, 'D-01', 'occupied'],
      ]);

      let scratch = '';
      const r = await runReplay({ fixture: out, out: join(work, 'run-made-after'), keepScratch: true, onScratch: (d) => void (scratch = d) });
      try {
        expect(r.manifest.ingestFailure).toBeNull();
        expect(r.manifest.counts.events).toBe(m.events.count);
        const t = new Catalog(join(scratch, 'warehouse')).getTable({ database: 'site_s1', table: 'yard_doors' });
        expect(rowsOf(t)).toEqual(doorsLive);
      } finally {
        rmSync(scratch, { recursive: true, force: true });
      }
    } finally {
      again?.close();
      first.remove();
    }
  }, 120_000);

  it('one that existed at the cut with no snapshot yet still starts them at position 0: its pending events are in the fixture', async () => {
    // yard_doors made at the start; the yard event is the first (nothing moved the frontier past
    // yard_doors before it), pending at the cut under its two-minute budget, which the seed tables
    // had gone past. Starting after their lowest position would lose it.
    const site = new LiveSite({ own: { tables: [DOORS], bindings: [BINDING], contracts: [CONTRACT] } });
    const out = join(work, 'pending-at-cut');
    try {
      const gen = new DemoEvents({ site: site.site, seed: 13 });
      const cut = T0 + 30_000;
      const until = T0 + 2 * MIN;
      site.receive([door(T0 + 100, 1, 'D-01', 'free'), ...gen.initial(T0 + 200)]);
      const demo: DemoEvent[] = [];
      for (let i = 0; i < 100; i++) demo.push(...gen.step(T0 + 1000 + i * 1000));
      site.receive(demo);
      await site.advance(cut);
      makeCut(site.catalog, site.database, 'replay-pending', { clock: site.clock });
      await site.advance(until);
      site.ingestor.commitAll();
      const doorsLive = rowsOf(site.catalog.getTable({ database: site.database, table: 'yard_doors' }));
      site.close();
      expect(doorsLive).toEqual([{ door_id: 'D-01', state: 'free', yard_seq: 1 }]);

      const m = await exportFixture({ data: site.dir, tag: 'pending', untilMs: until, out });
      expect(m.tables.yard_doors).toMatchObject({ snapshotId: null, journalPosition: null });
      expect(BigInt(m.tables.work_queue!.journalPosition!)).toBeGreaterThan(1n);
      expect(m.events.afterPosition).toBe('0');
      let scratch = '';
      const r = await runReplay({ fixture: out, out: join(work, 'run-pending-at-cut'), keepScratch: true, onScratch: (d) => void (scratch = d) });
      try {
        expect(r.manifest.ingestFailure).toBeNull();
        const t = new Catalog(join(scratch, 'warehouse')).getTable({ database: 'site_s1', table: 'yard_doors' });
        expect(rowsOf(t)).toEqual(doorsLive);
      } finally {
        rmSync(scratch, { recursive: true, force: true });
      }
    } finally {
      site.remove();
    }
  }, 120_000);
});
