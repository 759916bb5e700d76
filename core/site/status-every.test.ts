// The status says how often the site pushes it (`statusEveryMs`): the floor UI counts the site as
// not answering after a few of those without one, and then lets the ages it shows grow by its own
// clock (renderer/src/store/site-silence.test.ts). Pushed and read alike, the default and one set.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { SiteEvent, SiteStatus } from './api.ts';
import { initDataDir } from './init.ts';
import { SiteService } from './service.ts';
import { Site } from './site.ts';

let dir: string;
let site: Site;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-status-every-'));
  const data = join(dir, 'data');
  await initDataDir({ data, site: 'every', scrypt: { N: 1024, r: 8, p: 1 } });
  site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
}, 60_000);

afterAll(async () => {
  await site?.stop();
  rmSync(dir, { recursive: true, force: true });
});

it('says the push interval in force in the status it pushes and answers: 5 s by default', () => {
  const api = new SiteService(site, {});
  const pushed: SiteStatus[] = [];
  api.subscribe((e: SiteEvent) => void (e.type === 'status' && pushed.push(e.status)));
  api.tick();
  expect(pushed).toHaveLength(1);
  expect(pushed[0]!.statusEveryMs).toBe(5_000);
  expect(api.status().statusEveryMs).toBe(5_000);
});

it('says the interval the service was given', () => {
  const api = new SiteService(site, { statusEveryMs: 2_000 });
  expect(api.status().statusEveryMs).toBe(2_000);
});
