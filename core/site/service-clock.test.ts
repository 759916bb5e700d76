// The site tick on a wall clock that steps (NTP after a cold boot, a person setting the PC's time):
// the status and alarm pushes the floor UI waits for go on, whichever way the clock moved.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { SiteEvent } from './api.ts';
import { initDataDir } from './init.ts';
import { SiteService } from './service.ts';
import { Site } from './site.ts';

let dir: string;
let site: Site;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-service-clock-'));
  const data = join(dir, 'data');
  await initDataDir({ data, site: 'clock', scrypt: { N: 1024, r: 8, p: 1 } });
  site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
}, 60_000);

afterAll(async () => {
  await site?.stop();
  rmSync(dir, { recursive: true, force: true });
});

it('pushes status every statusEveryMs after the wall clock stepped back, not only once it caught up', () => {
  // A service of its own on a clock of its own, never started: its ticks are the test's.
  let t = Date.now();
  const api = new SiteService(site, { now: () => t, statusEveryMs: 5_000 });
  const statuses: SiteEvent[] = [];
  api.subscribe((e) => void (e.type === 'status' && statuses.push(e)));
  api.tick();
  expect(statuses).toHaveLength(1);
  // The clock is set back an hour; the ticks go on, a second apart.
  t -= 3_600_000;
  for (let i = 0; i < 6; i++) {
    t += 1_000;
    api.tick();
  }
  expect(statuses.length).toBeGreaterThanOrEqual(2);
  // And after a step forward the pushes keep their pace (one per statusEveryMs, not every tick).
  t += 86_400_000;
  const before = statuses.length;
  for (let i = 0; i < 10; i++) {
    t += 1_000;
    api.tick();
  }
  expect(statuses.length - before).toBeGreaterThanOrEqual(2);
  expect(statuses.length - before).toBeLessThanOrEqual(3);
});
