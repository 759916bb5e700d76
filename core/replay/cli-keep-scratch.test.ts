// `tilstand replay run --keep-scratch` leaves the scratch warehouse and journal in a folder whose
// name mkdtemp makes up: the run says where (stderr, `replay: scratch folder kept: <path>`), also
// when the run fails after the folder was made. Without --keep-scratch nothing is said and nothing
// is left.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DemoEvents } from './demo-events.ts';
import { exportFixture } from './export.ts';
import type { FixtureManifest } from './fixture.ts';
import { sha256File, stableJson } from './json.ts';
import { defaultScratchParent } from './replay.ts';
import { LiveSite, replayCli, T0 } from './test-support.ts';

let site: LiveSite;
let work: string;
let fixture: string;

beforeAll(async () => {
  site = new LiveSite();
  site.receive(new DemoEvents({ site: site.site, seed: 5 }).initial(T0 + 100));
  await site.advance(T0 + 20_000);
  site.close();
  work = mkdtempSync(join(defaultScratchParent(), 'tilstand-replay-keep-scratch-test-'));
  fixture = join(work, 'fixture');
  await exportFixture({ data: site.dir, tag: 'keep', atMs: T0 + 10_000, untilMs: T0 + 20_000, out: fixture });
}, 60_000);

afterAll(() => {
  site?.remove();
  if (work) rmSync(work, { recursive: true, force: true });
});

/** The `replay: scratch folder kept:` lines of a run's stderr. */
const keptLines = (err: string) => err.split('\n').filter((l) => l.startsWith('replay: scratch folder kept: '));

describe('replay run --keep-scratch', () => {
  it('says where the kept scratch folder is, on stderr', async () => {
    const scratch = join(work, 'scratch-kept');
    mkdirSync(scratch);
    const r = await replayCli(['replay', 'run', '--fixture', fixture, '--out', join(work, 'run-kept'), '--scratch', scratch, '--keep-scratch']);
    expect(r.code, r.err).toBe(0);
    const left = readdirSync(scratch);
    expect(left).toEqual([expect.stringMatching(/^tilstand-replay-/)]);
    const kept = join(scratch, left[0]!);
    // Was: no such line; the folder was found only by listing --scratch.
    expect(keptLines(r.err)).toEqual([`replay: scratch folder kept: ${kept}`]);
    expect(existsSync(join(kept, 'journal.db'))).toBe(true);
    expect(readdirSync(join(kept, 'warehouse'))).toContain('site_s1.db');
  }, 60_000);

  it('says it also when the run fails after the folder was made', async () => {
    const scratch = join(work, 'scratch-failed');
    mkdirSync(scratch);
    // A fixture whose bindings are not JSON, with checksums that match (so it opens): the run fails
    // once the scratch folder is made, when it reads them. (An --out that cannot be made is
    // refused before the folder is made, cli-out.test.ts.)
    const bad = join(work, 'fixture-bad-bindings');
    cpSync(fixture, bad, { recursive: true });
    writeFileSync(join(bad, 'config', 'bindings.json'), '[not json');
    const m = JSON.parse(readFileSync(join(bad, 'fixture.json'), 'utf8')) as FixtureManifest;
    m.files = m.files.map((f) => (f.path === 'config/bindings.json' ? { ...f, ...sha256File(join(bad, 'config', 'bindings.json')) } : f));
    writeFileSync(join(bad, 'fixture.json'), `${stableJson(m)}\n`);
    const r = await replayCli(['replay', 'run', '--fixture', bad, '--out', join(work, 'run-failed'), '--scratch', scratch, '--keep-scratch']);
    expect(r.code).toBe(5);
    const left = readdirSync(scratch);
    expect(left).toEqual([expect.stringMatching(/^tilstand-replay-/)]);
    expect(keptLines(r.err)).toEqual([`replay: scratch folder kept: ${join(scratch, left[0]!)}`]);
    expect(r.err).toMatch(/\ntilstand: .*JSON/);
    expect(existsSync(join(work, 'run-failed'))).toBe(false);
  }, 60_000);

  it('without --keep-scratch says nothing of it and leaves nothing', async () => {
    const scratch = join(work, 'scratch-removed');
    mkdirSync(scratch);
    const r = await replayCli(['replay', 'run', '--fixture', fixture, '--out', join(work, 'run-removed'), '--scratch', scratch]);
    expect(r.code, r.err).toBe(0);
    expect(keptLines(r.err)).toEqual([]);
    expect(readdirSync(scratch)).toEqual([]);
  }, 60_000);
});
