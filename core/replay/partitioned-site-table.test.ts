// A table of the site's own partitioned by day that keeps 30 days (config.json `tables` entry with
// `partitionKeys` and `partition.expiration-time`; core/ingest site-tables.ts), on the simulated
// clock of a "live" site (test-support.ts: the Ingestor as core/site opens it) and in a replay.
// Live: the events land in a partition per day; once the check interval has passed, a commit drops
// the partitions older than 30 days — gone from the latest snapshot, still read at a tag made
// before — and a partition whose value gives no time is told to ingest's onWarning (the site's log).
// Replay: the first check of a writer falls a random part of the interval after it opens (Java's
// behaviour); the replay draws it from the fixture, so two replays drop the same partitions at the
// same commits whatever Math.random says (README.md, "Partition expiration").
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { dayOf, DOOR_EVENTS, DOOR_EVENTS_BINDING, DOOR_EVENTS_CONTRACT, doorEventPayload } from '../ingest/test-support/door-events.ts';
import { Catalog, Table, valueToJson } from '../lsm/index.ts';
import { DemoEvents, type DemoEvent } from './demo-events.ts';
import { exportFixture, makeCut } from './export.ts';
import { defaultScratchParent, fixtureRandom, runReplay } from './replay.ts';
import { fixtureId, type FixtureManifest } from './fixture.ts';
import { LiveSite, T0 } from './test-support.ts';

const MIN = 60_000;

const event = (atMs: number, seq: number, day: string, door: string, state: string): DemoEvent => ({
  topic: 'tilstand/s1/events/yard/door_events',
  payload: doorEventPayload(seq, day, door, state, atMs),
  atMs,
});

function rowsOf(t: Table, tag?: string): Record<string, unknown>[] {
  return t.scanRows(tag ? { tag } : {}).map((row) => Object.fromEntries(t.schema.fields.map((f, i) => [f.name, valueToJson(f.type, row[i])])));
}
const days = (rows: Record<string, unknown>[]) => [...new Set(rows.map((r) => r.day as string))].sort();

/** The table's snapshots as (id, kind, time), oldest first. */
function history(t: Table): string[] {
  return t.snapshots.listIds().map((id) => {
    const s = t.snapshots.get(id);
    return `${id} ${s.commitKind} ${new Date(s.timeMillis).toISOString()}`;
  });
}

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(defaultScratchParent(), 'tilstand-replay-partitioned-test-'));
});
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});
afterEach(() => {
  vi.restoreAllMocks();
});

const TODAY = dayOf(T0);
const D60 = dayOf(T0, 60);
const D31 = dayOf(T0, 31);
const D29 = dayOf(T0, 29);

describe("a day-partitioned table of the site's own on a simulated clock", () => {
  it('takes events into a partition per day; past expiration + check interval a commit drops the old ones (still at an older tag), and a partition without a time is told to the log', async () => {
    const warnings: string[] = [];
    // The check interval of ten minutes; the first check a whole interval after the writer opens.
    const entry = { ...DOOR_EVENTS, options: { ...DOOR_EVENTS.options, 'partition.expiration-check-interval': '10 min' } };
    const live = new LiveSite({ own: { tables: [entry], bindings: [DOOR_EVENTS_BINDING], contracts: [DOOR_EVENTS_CONTRACT] }, onWarning: (m) => void warnings.push(m), partitionExpireRandom: () => 0 });
    try {
      live.receive([
        event(T0 + 1_000, 1, D60, 'D-01', 'free'),
        event(T0 + 1_100, 2, D31, 'D-02', 'occupied'),
        event(T0 + 1_200, 3, D29, 'D-03', 'down'),
        event(T0 + 1_300, 4, 'someday', 'D-04', 'free'),
        event(T0 + 1_400, 5, TODAY, 'D-01', 'occupied'),
      ]);
      await live.advance(T0 + MIN);
      const table = live.catalog.getTable({ database: live.database, table: 'door_events' });
      expect(table.schema.partitionKeys).toEqual(['day']);
      expect(days(rowsOf(table))).toEqual([D60, D31, D29, TODAY, 'someday'].sort());
      table.createTag('before-expiry');

      // Past the check interval (and each partition's 30 days): the next commit checks and drops.
      live.receive([event(T0 + 10 * MIN + 5_000, 6, TODAY, 'D-02', 'free')]);
      await live.advance(T0 + 11 * MIN);
      const after = live.catalog.getTable({ database: live.database, table: 'door_events' });
      expect(days(rowsOf(after))).toEqual([D29, TODAY, 'someday'].sort());
      expect(history(after).filter((h) => h.includes(' OVERWRITE '))).toHaveLength(1);
      // The tag from before still reads them (time travel; their files stay while it references them).
      expect(days(rowsOf(after, 'before-expiry'))).toEqual([D60, D31, D29, TODAY, 'someday'].sort());
      expect(warnings.filter((w) => w.includes('day=someday'))).toEqual([
        "ingest: table site_s1.door_events: partition 'day=someday' is not expired: no time can be read from its values: 'someday' does not match 'partition.timestamp-formatter' 'yyyy-MM-dd'; check 'partition.timestamp-formatter' / 'partition.timestamp-pattern', drop it by hand, or use 'partition.expiration-strategy' = 'update-time'",
      ]);
    } finally {
      live.remove();
    }
  }, 120_000);
});

describe("a day-partitioned table of the site's own in a replay", () => {
  it('drops its old partitions at the same commits in every replay of one fixture, the first check placed by the fixture', async () => {
    // The live site checks first two minutes after it opens, after the cut: the cut holds the old days.
    const entry = { ...DOOR_EVENTS, options: { ...DOOR_EVENTS.options, 'partition.expiration-check-interval': '2 min' } };
    const live = new LiveSite({ own: { tables: [entry], bindings: [DOOR_EVENTS_BINDING], contracts: [DOOR_EVENTS_CONTRACT] }, partitionExpireRandom: () => 0 });
    const CUT = T0 + MIN;
    const UNTIL = CUT + 5 * MIN;
    let fixture: string;
    let manifest: FixtureManifest;
    try {
      const gen = new DemoEvents({ site: live.site, seed: 5 });
      const events: DemoEvent[] = [...gen.initial(T0 + 100), event(T0 + 2_000, 1, D60, 'D-01', 'free'), event(T0 + 3_000, 2, D31, 'D-02', 'down')];
      // A door change every 5 s: the table commits every few seconds, so where the check falls shows.
      for (let i = 0; i < 70; i++) events.push(event(T0 + 5_000 + i * 5_000, 3 + i, TODAY, `D-${i % 7}`, i % 2 ? 'free' : 'occupied'));
      for (let i = 0; i < 360; i++) events.push(...gen.step(T0 + 1_000 + i * 1_000));
      live.receive(events.sort((a, b) => a.atMs - b.atMs));
      await live.advance(CUT);
      makeCut(live.catalog, live.database, 'replay-days', { clock: live.clock });
      await live.advance(UNTIL);
      live.ingestor.commitAll();
      live.close();
      fixture = join(work, 'fixture');
      manifest = await exportFixture({ data: live.dir, tag: 'days', untilMs: UNTIL, out: fixture });
    } finally {
      live.remove();
    }
    const atCut = Table.open(join(fixture, 'warehouse', 'site_s1.db', 'door_events'));
    expect(days(rowsOf(atCut, 'replay-days'))).toEqual([D60, D31, TODAY].sort());

    /** One replay with Math.random giving `r`; the door_events history and rows of its scratch warehouse. */
    const replay = async (name: string, r: number) => {
      vi.spyOn(Math, 'random').mockReturnValue(r);
      let scratch = '';
      try {
        const run = await runReplay({ fixture, out: join(work, name), keepScratch: true, onScratch: (d) => void (scratch = d) });
        expect(run.manifest.ingestFailure).toBeNull();
        const t = new Catalog(join(scratch, 'warehouse')).getTable({ database: 'site_s1', table: 'door_events' });
        return { history: history(t), days: days(rowsOf(t)) };
      } finally {
        vi.restoreAllMocks();
        if (scratch) rmSync(scratch, { recursive: true, force: true });
      }
    };
    const a = await replay('run-a', 0.05);
    const b = await replay('run-b', 0.95);
    // The old days are dropped in the replay, by one OVERWRITE snapshot…
    expect(a.days).toEqual([TODAY]);
    const drops = a.history.filter((h) => h.includes(' OVERWRITE '));
    expect(drops).toHaveLength(1);
    // …at the same commit in both (Math.random would have put the first check 6 s or 114 s after
    // the writer opened: a commit apart with a change every 5 s).
    expect(b.history).toEqual(a.history);
    // Where: at the first of the replay's commits (after the cut's snapshot) past the replay's start
    // + the interval − the fixture's draw (whole seconds); the one before it, if any, was not past it.
    const openMs = Math.min(manifest.cutMs, manifest.events.firstAtMs ?? manifest.cutMs);
    const dueMs = openMs + 2 * MIN - Math.floor(fixtureRandom(fixtureId(fixture))() * 120) * 1000;
    const at = (h: string) => Date.parse(h.split(' ')[2]!);
    const dropMs = at(drops[0]!);
    expect(dropMs).toBeGreaterThan(dueMs);
    const replayed = a.history.filter((h) => Number(h.split(' ')[0]) > manifest.tables.door_events!.snapshotId!);
    const before = replayed.filter((h) => at(h) < dropMs).at(-1);
    expect(before === undefined || at(before) <= dueMs, `${before} is past ${new Date(dueMs).toISOString()}`).toBe(true);
  }, 300_000);
});
