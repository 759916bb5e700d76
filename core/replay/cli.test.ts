// `tilstand replay …` option checks: a bad option is a usage error (exit 2) naming it, checked
// before the export reads or tags anything; export's --data is checked as the site commands check
// it (exit 1); times without a zone are UTC, as every other time option of `tilstand`.
// (What the commands do: replay.test.ts.)

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Table } from '../lsm/index.ts';
import { DemoEvents } from './demo-events.ts';
import type { FixtureManifest } from './fixture.ts';
import { defaultScratchParent } from './replay.ts';
import { LiveSite, replayCli, T0 } from './test-support.ts';

let site: LiveSite;
let work: string;

beforeAll(async () => {
  site = new LiveSite();
  site.receive(new DemoEvents({ site: site.site, seed: 3 }).initial(T0 + 100));
  await site.advance(T0 + 20_000);
  site.close();
  work = mkdtempSync(join(defaultScratchParent(), 'tilstand-replay-cli-test-'));
}, 60_000);

afterAll(() => {
  site?.remove();
  if (work) rmSync(work, { recursive: true, force: true });
});

const stockTags = () => Table.open(join(site.dir, 'warehouse', 'site_s1.db', 'stock')).listTags().map((t) => t.name);

describe('replay export', () => {
  it('reads --until and --at without a zone as UTC (as table scan --at), whatever the machine’s zone', async () => {
    const tz = process.env.TZ;
    process.env.TZ = 'Europe/Copenhagen'; // a site PC's zone (UTC+1 in November)
    try {
      const until = new Date(T0 + 30_000).toISOString().slice(0, 19); // 2026-11-30T06:00:30, no zone
      const at = new Date(T0 + 20_000).toISOString().slice(0, 19);
      const r = await replayCli(['replay', 'export', '--data', site.dir, '--tag', 'tz', '--at', at, '--until', until, '--out', join(work, 'fx-tz')]);
      expect(r.code, r.err).toBe(0);
      const m = JSON.parse(readFileSync(join(work, 'fx-tz', 'fixture.json'), 'utf8')) as FixtureManifest;
      expect([m.cutMs, m.untilMs]).toEqual([T0 + 20_000, T0 + 30_000]);
    } finally {
      if (tz === undefined) delete process.env.TZ;
      else process.env.TZ = tz;
    }
    const bad = await replayCli(['replay', 'export', '--data', site.dir, '--tag', 'tz-bad', '--until', 'yesterday', '--out', join(work, 'fx-tz-bad')]);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain("option '--until': expected an ISO-8601 time");
  });

  it('refuses an empty --tag or one that makes no tag name, as a usage error (exit 2) naming --tag, tagging nothing', async () => {
    const empty = await replayCli(['replay', 'export', '--data', site.dir, '--tag', '', '--until', 'now', '--out', join(work, 'fx-empty')]);
    expect([empty.code, empty.err]).toEqual([2, "tilstand: option '--tag': expected a fixture name or a tag to cut at, got ''\n"]);
    const prefix = await replayCli(['replay', 'export', '--data', site.dir, '--tag', 'replay-', '--until', 'now', '--out', join(work, 'fx-prefix')]);
    expect(prefix.code).toBe(2);
    const dots = await replayCli(['replay', 'export', '--data', site.dir, '--tag', '../x', '--until', 'now', '--out', join(work, 'fx-dots')]);
    expect([dots.code, dots.err]).toEqual([2, `tilstand: option '--tag': tag name "replay-../x" contains '..'\n`]);
    expect(stockTags()).not.toContain('replay-');
  });

  it('names a --data that is not a data directory as the site commands do (exit 1), not with ENOENT', async () => {
    const r = await replayCli(['replay', 'export', '--data', join(work, 'nowhere'), '--tag', 'x', '--until', 'now', '--out', join(work, 'fx-nowhere')]);
    expect(r.code).toBe(1);
    expect(r.err).toBe(`tilstand: ${join(work, 'nowhere')} is not a Tilstand data directory (no config.json); run \`tilstand init --data ${join(work, 'nowhere')} --site <id>\` first\n`);
  });
});

describe('replay run and diff', () => {
  it('a bad --agent (a missing file, an unknown rule or version) is a usage error (exit 2) naming it', async () => {
    const fx = join(work, 'no-fixture');
    const missing = await replayCli(['replay', 'run', '--fixture', fx, '--agent', join(work, 'nope.json'), '--out', join(work, 'o')]);
    expect(missing.code).toBe(2);
    expect(missing.err).toContain(`--agent ${join(work, 'nope.json')}: expected 'default' or a rules config file`);
    const rules = join(work, 'rules.json');
    writeFileSync(rules, JSON.stringify({ rules: ['no-such-rule'] }));
    const unknown = await replayCli(['replay', 'run', '--fixture', fx, '--agent', rules, '--out', join(work, 'o')]);
    expect(unknown.code).toBe(2);
    expect(unknown.err).toContain(`--agent ${rules}: agent rules config rules[0]: unknown rule "no-such-rule"`);
    writeFileSync(rules, JSON.stringify({ rules: [{ id: 'stock-reorder', version: '999' }] }));
    const version = await replayCli(['replay', 'run', '--fixture', fx, '--agent', rules, '--out', join(work, 'o')]);
    expect([version.code, version.err]).toEqual([2, expect.stringContaining('is installed at version')]);
    // A rule named twice ran twice in one agent: refused only once the fixture was opened and its
    // tables copied, by the agent (exit 5), as "rule id stock-reorder is used twice", naming no file.
    writeFileSync(rules, JSON.stringify({ rules: ['stock-reorder', { id: 'assign-job' }, { id: 'stock-reorder', version: '4' }] }));
    const twice = await replayCli(['replay', 'run', '--fixture', fx, '--agent', rules, '--out', join(work, 'o')]);
    expect([twice.code, twice.err]).toEqual([2, `tilstand: --agent ${rules}: agent rules config rules[2]: stock-reorder is named twice (rules[0] names it)\n`]);
  });

  it('a bad threshold in a rules config is named by its path in that file (config.…), not as a top level', async () => {
    const fx = join(work, 'no-fixture');
    const rules = join(work, 'thresholds.json');
    const refused = async (config: unknown) => {
      writeFileSync(rules, JSON.stringify({ label: 'x', config }));
      const r = await replayCli(['replay', 'run', '--fixture', fx, '--agent', rules, '--out', join(work, 'o')]);
      expect(r.code).toBe(2);
      return r.err;
    };
    expect(await refused({ defaultReorder: { reorderPoint: 30, orderUpTo: 20 } })).toBe(`tilstand: --agent ${rules}: agent rules config config.defaultReorder: expected orderUpTo > reorderPoint, got 20 ≤ 30\n`);
    expect(await refused({ reorderByItem: { 'ITEM-007': { locations: { 'A-01': { reorderPoint: 4 } } } } })).toContain(': agent rules config config.reorderByItem.ITEM-007.locations.A-01.orderUpTo: ');
    expect(await refused({ idleMs: 0 })).toContain(': agent rules config config.idleMs: unknown key (expected one of intervalMs, ');
    expect(await refused([1])).toBe(`tilstand: --agent ${rules}: agent rules config config: expected an object of agent config keys, got an array\n`);
  });

  it('a --fixture, --scratch or run folder that does not exist is a usage error (exit 2) naming it', async () => {
    const nowhere = join(work, 'nowhere');
    const fixture = await replayCli(['replay', 'run', '--fixture', nowhere, '--out', join(work, 'o')]);
    expect([fixture.code, fixture.err]).toEqual([2, `tilstand: option '--fixture': ${nowhere} does not exist\n`]);
    const scratch = await replayCli(['replay', 'run', '--fixture', work, '--scratch', nowhere, '--out', join(work, 'o')]);
    expect([scratch.code, scratch.err]).toEqual([2, `tilstand: option '--scratch': ${nowhere} does not exist\n`]);
    const diff = await replayCli(['replay', 'diff', work, nowhere, '--out', join(work, 'd')]);
    expect([diff.code, diff.err]).toEqual([2, `tilstand: replay diff: candidate run: ${nowhere} does not exist\n`]);
  });
});
