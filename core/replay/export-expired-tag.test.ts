// `replay export --tag hourly-…` cuts at that hourly tag (kept 7 days), `--tag agent-…` at an agent
// run's tag. Once the tag has expired (or was deleted), no table holds it, and the name was taken
// as a fixture's name: a new cut at the export's instant, `replay-hourly-2026112908`, exit 0 — with
// `--until now` a fixture named after that hour that holds none of it (0 events), and a new tag
// pinning the site's files. A name of the site's own tags that no table holds is refused, saying so.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog } from '../lsm/index.ts';
import { DemoEvents, type DemoEvent } from './demo-events.ts';
import { exportFixture } from './export.ts';
import { defaultScratchParent } from './replay.ts';
import { LiveSite, replayCli, T0 } from './test-support.ts';

const MIN = 60_000;
let work: string;
let site: LiveSite;

beforeAll(async () => {
  work = mkdtempSync(join(defaultScratchParent(), 'tilstand-replay-expired-tag-'));
  site = new LiveSite();
  const gen = new DemoEvents({ site: site.site, seed: 4 });
  site.receive(gen.initial(T0 + 100));
  const demo: DemoEvent[] = [];
  for (let i = 0; i < 60; i++) demo.push(...gen.step(T0 + 1000 + i * 1000));
  site.receive(demo);
  await site.advance(T0 + 3 * MIN);
  site.close();
}, 120_000);

afterAll(() => {
  site?.remove();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** The tags of every table of the site. */
function siteTags(): string[] {
  const c = new Catalog(join(site.dir, 'warehouse'));
  return c.listTables(site.database).flatMap((n) => c.getTable({ database: site.database, table: n }).listTags().map((t) => `${n}:${t.name}`));
}

describe('replay export --tag <a site tag that no table holds any more>', () => {
  it.each([
    ['hourly-2026112908', /tag hourly-2026112908 is not on any table of the site: an hourly tag is made only on a site with an HQ target, once its hour has begun, and kept 7 days \(core\/sync scheduled tags\); this one was never made here, has expired or was deleted/],
    ['agent-20261130-055900-000', /tag agent-20261130-055900-000 is not on any table of the site: an agent run's tag is kept/],
  ])('%s: refused, nothing tagged, no fixture', async (tag, why) => {
    const before = siteTags();
    const out = join(work, `${tag}.tar`);
    await expect(exportFixture({ data: site.dir, tag, out, untilMs: T0 + 3 * MIN, clock: () => T0 + 4 * MIN })).rejects.toThrow(why);
    expect(existsSync(out)).toBe(false);
    expect(siteTags()).toEqual(before);
    const cli = await replayCli(['replay', 'export', '--data', site.dir, '--tag', tag, '--until', 'now', '--out', out]);
    expect([cli.code, cli.out]).toEqual([5, '']);
    expect(cli.err).toMatch(why);
    expect(siteTags()).toEqual(before);
  });

  it('a fixture name of another form is still a new cut', async () => {
    const m = await exportFixture({ data: site.dir, tag: 'hourly-test', out: join(work, 'named'), clock: () => T0 + 4 * MIN });
    expect(m.tag).toBe('replay-hourly-test');
  });
});
