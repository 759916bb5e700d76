// An hourly tag made while the wall clock ran fast (a PC that booted with its clock hours ahead,
// then NTP stepped it back): `hourly-<hour>` was made for an hour that had not begun, on the state
// of then, and when that hour really came it was not made again (the name was taken) — so HQ kept
// for good, under the name of that hour, a state hours older than the hour ("the table as it was
// at the site's first sync in that hour", DESIGN.md). A scheduled tag whose creation time is later
// than now was made by a clock since stepped back: it is made again on the latest snapshot, and
// sent again (a tag moved to another snapshot).
// Which rests on a tag deleted on the site and made again on another snapshot being sent again
// also when a planning ran between the two (an operator deleting `baseline`, and making it again
// a few minutes later): the planning that no longer listed it forgot what HQ had got of it, the
// next one found its unit done and sent nothing, and HQ kept the old state under that name until
// the engine restarted.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tagFromJson } from '../lsm/snapshot.ts';
import { SyncEngine } from './engine.ts';
import { sitePrefix } from './names.ts';
import { hourlyTagName } from './scheduled-tags.ts';
import { DirectoryTarget } from './targets/directory.ts';
import { makeSite, tempDir, writeStock } from './test-support/site-fixture.ts';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

const HOUR = 3_600_000;

describe('an hourly tag made by a clock running fast', () => {
  it('is made again on the latest snapshot when its hour really comes, and HQ gets that one', async () => {
    const fx = makeSite('hts', { rows: 10 });
    const hq = tempDir('hq');
    cleanup.push(fx.data, hq);
    const real = Date.UTC(2026, 11, 1, 9, 10);
    const clock = { now: real + 2 * HOUR }; // booted two hours fast: 11:10 at 09:10
    const e = new SyncEngine({ dataDir: fx.data, site: fx.site, target: new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }), clock: () => clock.now, random: () => 0, retry: { baseMs: 1, maxMs: 5, jitter: 0 } });
    const sync = async () => {
      await e.enqueueSnapshotSync();
      for (let i = 0; i < 20 && e.status().pendingItems > 0; i++) await e.runOnce();
      expect(e.status().pendingItems).toBe(0);
    };
    try {
      const early = fx.table('stock').latestSnapshot()!.id;
      await sync();
      const name = hourlyTagName(real + 2 * HOUR); // hourly-2026120111, made at 09:10
      expect(fx.table('stock').tags.get(name).snapshot.id).toBe(early);
      // NTP steps the clock back; the site writes on; 11:05 really comes.
      clock.now = real + 5 * 60_000;
      writeStock(fx, 10, 20, 2);
      await sync();
      clock.now = real + 2 * HOUR - 5 * 60_000 + 10 * 60_000; // 11:05
      writeStock(fx, 20, 30, 3);
      const latest = fx.table('stock').latestSnapshot()!.id;
      expect(latest).toBeGreaterThan(early);
      await sync();
      // The tag of 11:00 is the state of 11:05, on the site and at HQ.
      expect(fx.table('stock').tags.get(name).snapshot.id).toBe(latest);
      const atHq = join(hq, ...`${sitePrefix('hts')}stock/tag/tag-${name}`.split('/'));
      expect(tagFromJson(readFileSync(atHq, 'utf8'), atHq).snapshot.id).toBe(latest);
      // Made once in its hour: a later sync in that hour leaves it.
      clock.now += 10 * 60_000;
      writeStock(fx, 30, 35, 4);
      await sync();
      expect(fx.table('stock').tags.get(name).snapshot.id).toBe(latest);
    } finally {
      await e.close();
    }
  }, 60_000);
});

describe('a tag deleted on the site and made again on another snapshot, a planning between', () => {
  it('is sent again: HQ gets the new one', async () => {
    const fx = makeSite('tmv', { rows: 10 });
    const hq = tempDir('hq');
    cleanup.push(fx.data, hq);
    const e = new SyncEngine({ dataDir: fx.data, site: fx.site, target: new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }), retry: { baseMs: 1, maxMs: 5, jitter: 0 }, scheduledTags: null });
    const sync = async () => {
      await e.enqueueSnapshotSync();
      for (let i = 0; i < 20 && e.status().pendingItems > 0; i++) await e.runOnce();
      expect(e.status().pendingItems).toBe(0);
    };
    const atHq = join(hq, ...`${sitePrefix('tmv')}stock/tag/tag-baseline`.split('/'));
    try {
      fx.table('stock').createTag('baseline');
      await sync();
      expect(tagFromJson(readFileSync(atHq, 'utf8'), atHq).snapshot.id).toBe(1);
      fx.table('stock').deleteTag('baseline');
      writeStock(fx, 10, 20, 2);
      await sync();
      fx.table('stock').createTag('baseline');
      const moved = fx.table('stock').tags.get('baseline').snapshot.id;
      expect(moved).toBeGreaterThan(1);
      await sync();
      expect(tagFromJson(readFileSync(atHq, 'utf8'), atHq).snapshot.id).toBe(moved);
    } finally {
      await e.close();
    }
  }, 60_000);
});
