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
import { session } from './test-support/session.ts';

let dir: string;
let site: Site;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-service-clock-'));
  const data = join(dir, 'data');
  await initDataDir({ data, site: 'clock', scrypt: { N: 1024, r: 8, p: 1 } });
  site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
  await site.users.add({ name: 'Kari', role: 'viewer', pin: '2580' });
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

it('signs out a screen left alone across a step back of the wall clock once the limit has passed, not once the clock caught up', async () => {
  // A service on clocks of its own: the wall clock (`now`) and the monotonic one (`monoNow`).
  let wall = Date.now();
  let mono = 0;
  const api = new SiteService(site, { now: () => wall, monoNow: () => mono });
  const idle = site.config.ui.idleSignOutMs;
  const why = { kind: 'unauthenticated', idleMs: idle };
  const s = session();
  await api.call('signIn', { user: 'Kari', secret: '2580' }, s, 0);
  // NTP sets the PC's clock back an hour; Kari goes on using the screen for 5 minutes.
  wall -= 3_600_000;
  wall += 300_000;
  mono += 300_000;
  expect(await api.call('me', {}, s, 0)).toEqual({ name: 'Kari', roles: ['viewer'] });
  // She walks away without signing out; the next person reloads the page past the limit: not Kari.
  wall += idle + 1_000;
  mono += idle + 1_000;
  await expect(api.call('me', {}, s, null)).rejects.toMatchObject(why);
  expect(s.user).toBeNull();
  // Within the limit of her last use the step signs nobody out.
  const r = session();
  await api.call('signIn', { user: 'Kari', secret: '2580' }, r, 0);
  wall -= 3_600_000;
  wall += idle - 1_000;
  mono += idle - 1_000;
  expect(await api.call('me', {}, r, null)).toEqual({ name: 'Kari', roles: ['viewer'] });
  // A PC asleep past the limit (its monotonic clock stands still meanwhile): the wall clock says it.
  const asleep = new SiteService(site, { now: () => wall, monoNow: () => mono });
  const q = session();
  await asleep.call('signIn', { user: 'Kari', secret: '2580' }, q, 0);
  wall += idle + 1_000;
  await expect(asleep.call('me', {}, q, null)).rejects.toMatchObject(why);
});
