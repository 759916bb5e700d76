// `tilstand sync now` on a running site whose engine HQ's sender marker refuses (another data
// directory of the same site sends): exit 3 (conflict) with the owner named, as the command exits
// with no site running — not 5 (steps pending), which reads as a line that is down. The site's
// `sync.now` answer says so (`refused`), an added field an older CLI ignores.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { senderMarkerKey } from '../sync/names.ts';
import { controlRequest } from './control.ts';
import { runMain as cli } from './cli/test-support.ts';
import { runningSocket } from './cli/common.ts';
import { Site } from './site.ts';

const dirs: string[] = [];
const sites: Site[] = [];
afterEach(async () => {
  for (const s of sites.splice(0)) await s.stop();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const OWNER = 'belongs to another sender: other-pc on spare (/srv/tilstand), since 2026-12-01T00:00:00.000Z (restore)';

/** The `last error:` line of `sync now`'s text output. */
const lastErrorLine = (out: string): string | undefined => out.split('\n').find((l) => l.startsWith('last error:'));

describe('sync now on a running site that HQ refuses', () => {
  it('exits 3 naming the owner, as without a running site; the sync.now answer says refused', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tilstand-site-sync-refused-'));
    dirs.push(dir);
    const data = join(dir, 'data');
    const hq = join(dir, 'hq');
    const site = await Site.start({ data, demo: true, mqttPort: 0, httpPort: 0, demoStepMs: 600_000, hq, syncIntervalMs: 600_000, agentTimer: false });
    sites.push(site);
    const socket = await runningSocket(data);
    expect(socket).toBeDefined();
    const first = await cli(['sync', 'now', '--data', data]);
    expect(first.code, first.err).toBe(0);
    // Accepted: the answer says not refused.
    expect(await controlRequest(socket!, 'sync.now', {}, 60_000)).toMatchObject({ refused: false });

    // Another PC of the same site took HQ's prefix (restored from HQ).
    const markerPath = join(hq, ...senderMarkerKey('demo').split('/'));
    mkdirSync(join(markerPath, '..'), { recursive: true });
    writeFileSync(markerPath, JSON.stringify({ format: 1, sender: 'other-pc', host: 'spare', dataDir: '/srv/tilstand', sinceMs: Date.UTC(2026, 11, 1), by: 'restore' }));
    site.ingestor.commitAll();

    const answer = (await controlRequest(socket!, 'sync.now', {}, 60_000)) as { refused?: unknown; status: { healthy: boolean; lastError: string | null } };
    expect(answer.refused).toBe(true);
    expect(answer.status.healthy).toBe(false);
    expect(answer.status.lastError).toContain(OWNER);

    const running = await cli(['sync', 'now', '--data', data]);
    // Why it exits 3, on stderr, in the words of the command run with no site (below).
    expect(running.err).toBe("tilstand: nothing was sent: HQ's sender marker names another data directory for site demo (the last error says which; --take-over makes this directory the sender)\n");
    expect(running.out).toMatch(/by the site running on/);
    expect(running.out).toContain(OWNER);
    expect(running.out).toMatch(/health: +STALLED/);
    expect(running.code).toBe(3);
    const runningJson = await cli(['sync', 'now', '--data', data, '--json']);
    expect(runningJson.code).toBe(3);
    expect((JSON.parse(runningJson.out) as { lastError: string }).lastError).toContain(OWNER);
    // The marker is untouched: the refused site wrote nothing there.
    expect(JSON.parse(readFileSync(markerPath, 'utf8'))).toMatchObject({ sender: 'other-pc' });

    // The same command with no site running: the same exit code and the same error.
    await site.stop();
    sites.pop();
    const stopped = await cli(['sync', 'now', '--data', data]);
    expect(stopped.out).not.toMatch(/by the site running on/);
    expect(stopped.code).toBe(3);
    expect(lastErrorLine(stopped.out)).toBe(lastErrorLine(running.out));
    expect(stopped.err).toBe(running.err);
  }, 120_000);
});
