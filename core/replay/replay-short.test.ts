// A fixture whose manifest no longer agrees with its events (fixture.json is the one file without a
// checksum: a damaged digit in `untilMs` or `events.count` still parses) is refused as damaged,
// never replayed over part of its events as if that were the period.
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync, cpSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DemoEvents } from './demo-events.ts';
import { exportFixture, makeCut } from './export.ts';
import type { FixtureManifest } from './fixture.ts';
import { progressBar } from './progress.ts';
import { defaultScratchParent, runReplay } from './replay.ts';
import { LiveSite, T0 } from './test-support.ts';

const MIN = 60_000;
let dir: string;
let fixture: string;
let m: FixtureManifest;

beforeAll(async () => {
  dir = mkdtempSync(join(defaultScratchParent(), 'tilstand-replay-short-'));
  const site = new LiveSite();
  try {
    const gen = new DemoEvents({ site: site.site, seed: 3 });
    site.receive(gen.initial(T0 + 100));
    await site.advance(T0 + 90_000);
    makeCut(site.catalog, site.database, 'replay-short', { clock: site.clock });
    for (let i = 0; i < 60; i++) site.receive(gen.step(T0 + 100_000 + i * 2_000));
    await site.advance(T0 + 4 * MIN);
    site.close();
    fixture = join(dir, 'fixture');
    m = await exportFixture({ data: site.dir, tag: 'short', untilMs: T0 + 4 * MIN, atMs: T0 + 90_000, out: fixture });
  } finally {
    site.remove();
  }
}, 120_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A copy of the fixture with its manifest changed by `edit`. */
function damaged(name: string, edit: (m: FixtureManifest) => void): string {
  const to = join(dir, name);
  cpSync(fixture, to, { recursive: true });
  const mf = JSON.parse(readFileSync(join(to, 'fixture.json'), 'utf8')) as FixtureManifest;
  edit(mf);
  writeFileSync(join(to, 'fixture.json'), `${JSON.stringify(mf, null, 2)}\n`);
  return to;
}

describe('a fixture whose manifest disagrees with its events', () => {
  it('replays whole as exported', async () => {
    expect(m.events.count).toBeGreaterThan(20);
    const r = await runReplay({ fixture, out: join(dir, 'run-ok') });
    expect(r.manifest.counts.events).toBe(m.events.count);
  }, 60_000);

  it('an untilMs that ends before its last events is refused, and no run is written', async () => {
    // Ends at the 30th event's instant: half the events lie after it.
    const fx = damaged('fx-until', (mf) => void (mf.untilMs = T0 + 100_000 + 30 * 2_000));
    const out = join(dir, 'run-until');
    await expect(runReplay({ fixture: fx, out })).rejects.toThrow(/fixture\.json is damaged: .*events/);
    expect(existsSync(out)).toBe(false);
  }, 60_000);

  it('an events.count above what the events file holds is refused', async () => {
    const fx = damaged('fx-count', (mf) => void (mf.events.count += 1));
    const out = join(dir, 'run-count');
    await expect(runReplay({ fixture: fx, out })).rejects.toThrow(/fixture\.json is damaged: .*events/);
    expect(existsSync(out)).toBe(false);
  }, 60_000);

  it('an events.count below what the events file holds is refused as damaged, also under the progress bar', async () => {
    // The bar (on by default on a terminal) drew more events than the count as a negative run of
    // dots: a RangeError ("Invalid count value") in place of the damage.
    const fx = damaged('fx-count-low', (mf) => void (mf.events.count -= 5));
    const out = join(dir, 'run-count-low');
    const drawn: string[] = [];
    const bar = progressBar(Object.assign(new Writable({ write: (c, _e, done) => (drawn.push(String(c)), done()) }), { isTTY: true }));
    await expect(runReplay({ fixture: fx, out, onProgress: (p) => bar.update(p) })).rejects.toThrow(/fixture\.json is damaged: events\.ndjson\.gz holds \d+ events/);
    expect(drawn.join('')).toMatch(/\[#{30}\] 100\.0 %/);
    expect(existsSync(out)).toBe(false);
  }, 60_000);
});
