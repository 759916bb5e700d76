// An hourly tag made while the clock ran fast is deleted when the clock is stepped back and made
// again in its hour (scheduled-tags.ts; hourly-tag-clock-step.test.ts). While HQ could not be
// reached, its first version was still waiting in the outbox when it was deleted: the planning
// that no longer listed it forgot what the outbox held of it, and the one after its re-making
// found its unit pending and planned nothing — so the old version (the state of hours before its
// hour, its snapshot no longer held on the site) was what HQ got when the line came back, and the
// tag of that hour never reached HQ. It is planned again as a tag moved while waiting.
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tagFromJson } from '../lsm/snapshot.ts';
import { SyncEngine } from './engine.ts';
import { SyncError } from './errors.ts';
import { sitePrefix } from './names.ts';
import { hourlyTagName } from './scheduled-tags.ts';
import { DirectoryTarget } from './targets/directory.ts';
import { faultyTarget } from './test-support/health-site.ts';
import { makeSite, tempDir, writeStock } from './test-support/site-fixture.ts';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

const HOUR = 3_600_000;

describe('an hourly tag made by a fast clock while HQ is unreachable', () => {
  it('made again in its hour, HQ gets the new version once the line is back', async () => {
    const fx = makeSite('htp', { rows: 10 });
    const hq = tempDir('hq');
    cleanup.push(fx.data, hq);
    const line = { down: true };
    const target = faultyTarget(new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }), () => {
      if (line.down) throw new SyncError('Transport', 'connect ENETUNREACH');
    });
    const real = Date.UTC(2026, 11, 1, 9, 10);
    const clock = { now: real + 2 * HOUR }; // booted two hours fast: 11:10 at 09:10
    const e = new SyncEngine({ dataDir: fx.data, site: fx.site, target, clock: () => clock.now, random: () => 0, retry: { baseMs: 1, maxMs: 5, jitter: 0 } });
    const round = async () => {
      await e.enqueueSnapshotSync();
      for (let i = 0; i < 20 && e.status().pendingItems > 0; i++) {
        const r = await e.runOnce();
        if (r.done + r.failed === 0) break;
      }
    };
    try {
      const name = hourlyTagName(real + 2 * HOUR);
      await round();
      expect(fx.table('stock').tags.exists(name)).toBe(true);
      expect(e.outbox.pendingUnits('tag:stock:')).toContain(`tag:stock:${name}`);
      // NTP steps the clock back: the tag ahead is deleted (a planning between).
      clock.now = real + 5 * 60_000;
      writeStock(fx, 10, 20, 2);
      await round();
      expect(fx.table('stock').tags.exists(name)).toBe(false);
      // 11:05 really comes: made again on the state of then; the line is back.
      clock.now = real + 2 * HOUR - 5 * 60_000;
      writeStock(fx, 20, 30, 3);
      const latest = fx.table('stock').latestSnapshot()!.id;
      line.down = false;
      clock.now += 60_000;
      await round();
      await round();
      expect(fx.table('stock').tags.get(name).snapshot.id).toBe(latest);
      expect(e.status().pendingItems).toBe(0);
      const atHq = join(hq, ...`${sitePrefix('htp')}stock/tag/tag-${name}`.split('/'));
      expect(tagFromJson(readFileSync(atHq, 'utf8'), atHq).snapshot.id).toBe(latest);
    } finally {
      await e.close();
    }
  }, 60_000);
});
