// A fixture moved or copied to another path (another disk, a remount, a colleague's machine) keeps
// its tags: the export copies the files (no links, no absolute paths in a table's files), so a
// replay of the moved copy, folder or archive, is the replay of the original, byte for byte.
import { cpSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog } from '../lsm/index.ts';
import { DemoEvents } from './demo-events.ts';
import { exportFixture, makeCut } from './export.ts';
import type { FixtureManifest } from './fixture.ts';
import { defaultScratchParent, runReplay } from './replay.ts';
import { LiveSite, T0 } from './test-support.ts';

const MIN = 60_000;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(defaultScratchParent(), 'tilstand-replay-moved-'));
  const site = new LiveSite();
  try {
    const gen = new DemoEvents({ site: site.site, seed: 5 });
    site.receive(gen.initial(T0 + 100));
    await site.advance(T0 + 3 * MIN);
    makeCut(site.catalog, site.database, 'replay-moved', { clock: site.clock });
    for (let i = 0; i < 60; i++) site.receive(gen.step(T0 + 3 * MIN + 1_000 + i * 2_000));
    await site.advance(T0 + 6 * MIN);
    site.close();
    await exportFixture({ data: site.dir, tag: 'moved', untilMs: T0 + 6 * MIN, out: join(dir, 'a', 'fixture') });
    await exportFixture({ data: site.dir, tag: 'moved', untilMs: T0 + 6 * MIN, out: join(dir, 'a', 'fixture.tar') });
  } finally {
    site.remove();
  }
}, 120_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a fixture moved to another path', () => {
  it('keeps its tags and replays as where it was exported', async () => {
    await runReplay({ fixture: join(dir, 'a', 'fixture'), out: join(dir, 'run-before') });
    cpSync(join(dir, 'a'), join(dir, 'b', 'elsewhere'), { recursive: true });
    rmSync(join(dir, 'a'), { recursive: true });
    const kept: string[] = [];
    for (const [name, fx] of [['folder', 'fixture'], ['archive', 'fixture.tar']] as const) {
      const out = join(dir, `run-${name}`);
      await runReplay({ fixture: join(dir, 'b', 'elsewhere', fx), out, keepScratch: true, onScratch: (d) => kept.push(d) });
      for (const f of ['run.json', 'proposals.json', 'decisions.json', 'agent-runs.json']) {
        expect(readFileSync(join(out, f), 'utf8'), `${name} ${f}`).toBe(readFileSync(join(dir, 'run-before', f), 'utf8'));
      }
    }
    // The moved fixture's tables hold their tags (the cut's, and the agent's baseline).
    const moved = join(dir, 'b', 'elsewhere', 'fixture');
    renameSync(moved, join(dir, 'c'));
    const mf = JSON.parse(readFileSync(join(dir, 'c', 'fixture.json'), 'utf8')) as FixtureManifest;
    const cat = new Catalog(join(dir, 'c', 'warehouse'));
    expect(Object.keys(mf.tables).length).toBeGreaterThan(0);
    for (const t of Object.keys(mf.tables)) {
      const tags = cat.getTable({ database: mf.database, table: t }).tags.list().map((x) => x.name);
      expect(tags, t).toContain('replay-moved');
    }
    for (const k of kept) rmSync(k, { recursive: true, force: true });
  }, 120_000);
});
