// A replay does not depend on the zone of the machine it runs on. The table store keeps Java
// Paimon's local-time semantics (partition expiration compares the local wall clock with a
// partition's day, a tag's create time is local): a fixture replayed at HQ in another zone than
// the site's would drop a partition at another instant, or not at all within the period. The
// export records the site's zone, and the replay runs in it.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dayOf, DOOR_EVENTS, DOOR_EVENTS_BINDING, DOOR_EVENTS_CONTRACT, doorEventPayload } from '../ingest/test-support/door-events.ts';
import { Catalog, valueToJson } from '../lsm/index.ts';
import { DemoEvents, type DemoEvent } from './demo-events.ts';
import { exportFixture, makeCut } from './export.ts';
import { defaultScratchParent, runReplay } from './replay.ts';
import { LiveSite, T0 } from './test-support.ts';

const MIN = 60_000;
const TODAY = dayOf(T0);
// 30 days before T0 (06:00 UTC): past 30 d of expiration on a UTC clock, not yet on Los Angeles'
// (22:00 the day before).
const D30 = dayOf(T0, 30);

const event = (atMs: number, seq: number, day: string, door: string, state: string): DemoEvent => ({
  topic: 'tilstand/s1/events/yard/door_events',
  payload: doorEventPayload(seq, day, door, state, atMs),
  atMs,
});

/** Runs `f` with the process in time zone `tz`, restoring the zone after. */
async function inZone<T>(tz: string, f: () => Promise<T>): Promise<T> {
  const was = process.env.TZ;
  process.env.TZ = tz;
  try {
    return await f();
  } finally {
    if (was === undefined) delete process.env.TZ;
    else process.env.TZ = was;
  }
}

let work: string;
let fixture: string;
beforeAll(async () => {
  work = mkdtempSync(join(defaultScratchParent(), 'tilstand-replay-tz-test-'));
  // The site runs, and is exported, in UTC.
  await inZone('UTC', async () => {
    const entry = { ...DOOR_EVENTS, options: { ...DOOR_EVENTS.options, 'partition.expiration-check-interval': '2 min' } };
    const live = new LiveSite({ own: { tables: [entry], bindings: [DOOR_EVENTS_BINDING], contracts: [DOOR_EVENTS_CONTRACT] }, partitionExpireRandom: () => 0 });
    try {
      const gen = new DemoEvents({ site: live.site, seed: 5 });
      const events: DemoEvent[] = [...gen.initial(T0 + 100), event(T0 + 2_000, 1, D30, 'D-01', 'free')];
      for (let i = 0; i < 70; i++) events.push(event(T0 + 5_000 + i * 5_000, 2 + i, TODAY, `D-${i % 7}`, i % 2 ? 'free' : 'occupied'));
      for (let i = 0; i < 360; i++) events.push(...gen.step(T0 + 1_000 + i * 1_000));
      live.receive(events.sort((a, b) => a.atMs - b.atMs));
      await live.advance(T0 + MIN);
      makeCut(live.catalog, live.database, 'replay-tz', { clock: live.clock });
      await live.advance(T0 + 6 * MIN);
      live.ingestor.commitAll();
      live.close();
      fixture = join(work, 'fixture');
      await exportFixture({ data: live.dir, tag: 'tz', untilMs: T0 + 6 * MIN, out: fixture });
    } finally {
      live.remove();
    }
  });
}, 300_000);
afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

/** The door_events days left in a replay's scratch warehouse, the replay run in zone `tz`. */
async function replayedDays(tz: string, name: string): Promise<string[]> {
  let scratch = '';
  try {
    await inZone(tz, () => runReplay({ fixture, out: join(work, name), keepScratch: true, onScratch: (d) => void (scratch = d) }));
    const t = new Catalog(join(scratch, 'warehouse')).getTable({ database: 'site_s1', table: 'door_events' });
    const day = t.schema.fields.findIndex((f) => f.name === 'day');
    return [...new Set(t.scanRows({}).map((r) => valueToJson(t.schema.fields[day]!.type, r[day]) as string))].sort();
  } finally {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
}

describe('a replay in another time zone than the site', () => {
  it('drops the partitions the site would have, whatever the zone of the machine it runs on', async () => {
    expect(JSON.parse(readFileSync(join(fixture, 'fixture.json'), 'utf8')).timeZone).toBe('UTC');
    const utc = await replayedDays('UTC', 'run-utc');
    expect(utc).toEqual([TODAY]);
    expect(await replayedDays('America/Los_Angeles', 'run-la')).toEqual(utc);
    expect(await replayedDays('Pacific/Kiritimati', 'run-kiritimati')).toEqual(utc);
    // The process's own zone is given back.
    expect(process.env.TZ).toBeUndefined();
  }, 300_000);
});
