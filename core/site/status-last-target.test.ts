// `tilstand status` of a stopped site names the HQ target the site last synced to — the one its
// outbox's state (steps pending, last success) is about — and, when config.json's hq.target is
// another (the last start was given --hq), says which one config.json names. It named config.json's
// target beside the other target's outbox state.

import { mkdtempSync, rmSync } from 'node:fs';
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
