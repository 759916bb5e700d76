// `tilstand status` of a stopped site names the HQ target the site last synced to — the one its
// outbox's state (steps pending, last success) is about — and, when config.json's hq.target is
// another (the last start was given --hq), says which one config.json names. It named config.json's
// target beside the other target's outbox state.
// Of a running site, it names the target the site syncs to and, when config.json names another by
// now (edited while it runs, or the site was started with --hq), which one the next start uses. It
// named the running target alone: an edited hq.target looked as if it had been taken.

import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runMain as run } from './cli/test-support.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';
import type { SiteStatus } from './status.ts';

const FAST = { N: 1024, r: 8, p: 1 };
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-status-last-target-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Starts the site on `data` (with `hq`: as `tilstand start --hq`), syncs once, stops it. */
async function runOnce(data: string, hq?: string): Promise<void> {
  const site = await Site.start({ data, httpPort: 0, mqttPort: 0, ui: false, agentTimer: false, syncIntervalMs: 600_000, ...(hq ? { hq } : {}) });
  try {
    site.sync!.enqueueSnapshotSync();
    await site.sync!.runOnce();
  } finally {
    await site.stop();
  }
}

const syncLine = (out: string) => out.split('\n').find((l) => l.startsWith('sync: ')) ?? '(no sync line)';

describe('tilstand status of a stopped site: the sync target', () => {
  it('names the target the site last synced to, given with --hq, and the one config.json names', async () => {
    const data = join(dir, 'data');
    const configured = join(dir, 'hq-config');
    const given = join(dir, 'hq-given');
    await initDataDir({ data, site: 'north', scrypt: FAST, config: (c) => ({ ...c, hq: { ...c.hq, target: configured } }) });
    await runOnce(data, given);
    const r = await run(['status', '--data', data]);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(syncLine(r.out)).toMatch(
      new RegExp(`^sync: to dir:${given} \\(where it last synced; config\\.json names ${configured}, where a start without --hq syncs, sending everything again\\), online, \\d+ steps? pending.*, last success [\\d.]+ (ms|s) ago$`),
    );
    const j = JSON.parse((await run(['status', '--data', data, '--json'])).out) as SiteStatus;
    expect(j.sync?.target).toMatch(new RegExp(`^dir:${given} \\(where it last synced; config\\.json names ${configured},`));
    expect(j.sync?.lastSuccessMs).toEqual(expect.any(Number));
  }, 60_000);

  it('names config.json\'s target alone when the site last synced there', async () => {
    const data = join(dir, 'data');
    const configured = join(dir, 'hq-config');
    await initDataDir({ data, site: 'north', scrypt: FAST, config: (c) => ({ ...c, hq: { ...c.hq, target: configured } }) });
    // Before the first start the outbox has sent nowhere: config.json's target, as always.
    expect(syncLine((await run(['status', '--data', data])).out)).toMatch(new RegExp(`^sync: to ${configured}, OFFLINE, 0 steps pending, last success never`));
    await runOnce(data);
    expect(syncLine((await run(['status', '--data', data])).out)).toMatch(new RegExp(`^sync: to ${configured}, online, \\d+ steps? pending.*, last success [\\d.]+ (ms|s) ago$`));
    // Given with --hq the same directory, written another way: the same target.
    await runOnce(data, `${configured}/`);
    expect(syncLine((await run(['status', '--data', data])).out)).toMatch(new RegExp(`^sync: to ${configured}, online`));
  }, 60_000);
});

/** Sets config.json's hq.target in `data` (null: none), as someone editing the file does. */
function setConfigTarget(data: string, target: string | null): void {
  const file = join(data, 'config.json');
  const c = JSON.parse(readFileSync(file, 'utf8')) as { hq?: { target: string | null } };
  c.hq = { ...c.hq, target };
  writeFileSync(file, JSON.stringify(c, null, 2));
}

describe('tilstand status of a running site: the sync target', () => {
  const sites: Site[] = [];
  afterEach(async () => {
    for (const s of sites.splice(0)) await s.stop();
  });
  const start = async (data: string, hq?: string) => {
    const site = await Site.start({ data, httpPort: 0, mqttPort: 0, ui: false, agentTimer: false, syncIntervalMs: 600_000, ...(hq ? { hq } : {}) });
    sites.push(site);
    return site;
  };
  const status = async (data: string) => {
    const r = await run(['status', '--data', data]);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(r.out).toMatch(/^site north — running/);
    return syncLine(r.out);
  };
  const statusJson = async (data: string) => JSON.parse((await run(['status', '--data', data, '--json'])).out) as SiteStatus;

  it("names config.json's target beside the running one when hq.target was edited while the site runs, and nothing when they are the same", async () => {
    const data = join(dir, 'data');
    const first = join(dir, 'hq-first');
    const edited = join(dir, 'hq-edited');
    await initDataDir({ data, site: 'north', scrypt: FAST, config: (c) => ({ ...c, hq: { ...c.hq, target: first } }) });
    await start(data);
    expect(await status(data)).toMatch(new RegExp(`^sync: to ${first}, (online|OFFLINE), `));
    // The same directory written another way: the same target, no note.
    setConfigTarget(data, `file://${first}`);
    expect(await status(data)).toMatch(new RegExp(`^sync: to ${first}, (online|OFFLINE), `));

    setConfigTarget(data, edited);
    expect(await status(data)).toMatch(new RegExp(`^sync: to ${first} \\(config\\.json names ${edited}, used from the next start without --hq, sending everything again\\), (online|OFFLINE), `));
    // JSON: sync.target stays the running site's; config.json's is a field of its own.
    const j = await statusJson(data);
    expect([j.sync?.target, j.syncDescription, j.configSyncTarget]).toEqual([first, `dir:${first}`, edited]);

    // config.json that does not parse: the line as the site gives it, and status still answers.
    writeFileSync(join(data, 'config.json'), '{ not json');
    expect(await status(data)).toMatch(new RegExp(`^sync: to ${first}, (online|OFFLINE), `));
  }, 60_000);

  it('says a target given with --hq is not in config.json, and names one config.json gained while the site syncs nowhere', async () => {
    const data = join(dir, 'data');
    const given = join(dir, 'hq-given');
    await initDataDir({ data, site: 'north', scrypt: FAST });
    const site = await start(data, given);
    expect(await status(data)).toMatch(new RegExp(`^sync: to ${given} \\(given with --hq; not in config\\.json\\), (online|OFFLINE), `));
    expect((await statusJson(data)).configSyncTarget).toBeNull();
    await site.stop();
    sites.length = 0;

    const other = join(dir, 'data-2');
    const added = join(dir, 'hq-added');
    await initDataDir({ data: other, site: 'north', scrypt: FAST });
    await start(other);
    expect(await status(other)).toBe('sync: no HQ target (config hq.target; docs/operations.md, "Connecting to headquarters")');
    setConfigTarget(other, added);
    expect(await status(other)).toBe(`sync: no HQ target in this run (config.json names ${added}, used from the next start)`);
  }, 60_000);
});
