// A table no binding feeds (config.json lists bindings, none of them writes to it) is never behind
// anything: its age stays 0 and it stayed "within budget" forever in status, `tilstand status` and
// the Tables screen, which a reader took for "current". Status now says `fed: false`, the human
// form "no source", and it raises no alarm by itself; a fed table is shown as before.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SEED_BINDINGS } from '../ingest/seed-bindings.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';
import { formatStatus, statusFromDirectory } from './status.ts';
import type { SessionContext } from './api.ts';

let dir: string;
const closers: (() => unknown)[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-unfed-'));
});
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
  rmSync(dir, { recursive: true, force: true });
});

/** The human status line of `table` (the table's name, then its columns). */
const lineOf = (lines: string[], table: string) => lines.find((l) => l.startsWith(`${table} `))!;

describe('a table no binding feeds', () => {
  it('is fed: false in the site API, status and `tilstand status`, running or not, and raises no alarm', async () => {
    const data = join(dir, 'uf');
    // The site's own bindings: every seed binding but the one that writes to resources.
    await initDataDir({ data, site: 'uf', scrypt: { N: 1024, r: 8, p: 1 }, config: (c) => ({ ...c, bindings: SEED_BINDINGS.filter((b) => b.table !== 'resources') }) });
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    let running = true;
    closers.push(() => running && site.stop());

    const app = site.service.status();
    const byName = new Map(app.tables.map((t) => [t.table, t]));
    expect(byName.get('resources')).toMatchObject({ fed: false, ageMs: 0, withinBudget: true });
    for (const t of ['work_queue', 'stock', 'dead_letters']) expect(byName.get(t)!.fed).toBe(true);
    expect(app.alarms).toEqual([]);

    // The Tables screen's source carries it too.
    await site.users.add({ name: 'Kari', role: 'viewer', pin: '2468' });
    const s: SessionContext = { user: null, setUser(u) { this.user = u; } } as SessionContext;
    await site.service.call('signIn', { user: 'Kari', secret: '2468' }, s);
    const tables = await site.service.call('tables', {}, s);
    expect(tables.find((t) => t.table === 'resources')!.fed).toBe(false);
    expect(tables.find((t) => t.table === 'stock')!.fed).toBe(true);

    // `tilstand status` of the running site (Site.status, over the control socket).
    const st = site.status();
    expect(st.tables.find((t) => t.table === 'resources')!.fed).toBe(false);
    const lines = formatStatus(st);
    expect(lineOf(lines, 'resources')).toMatch(/\bno source\b.*\bno binding feeds it$/);
    expect(lineOf(lines, 'resources')).not.toMatch(/behind|within budget/);
    expect(lineOf(lines, 'stock')).toMatch(/0 ms behind.*within budget$/);

    // And read from the directory once the site stopped.
    running = false;
    await site.stop();
    const off = statusFromDirectory(data);
    expect(off.tables.find((t) => t.table === 'resources')!.fed).toBe(false);
    expect(off.tables.find((t) => t.table === 'work_queue')!.fed).toBe(true);
    expect(lineOf(formatStatus(off), 'resources')).toMatch(/\bno source\b.*\bno binding feeds it$/);
    expect(lineOf(formatStatus(off), 'work_queue')).toMatch(/^work_queue +\S+ +– /);
  }, 60_000);

  it('with the seed bindings every table is fed', async () => {
    const data = join(dir, 'sd');
    await initDataDir({ data, site: 'sd', scrypt: { N: 1024, r: 8, p: 1 } });
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    closers.push(() => site.stop());
    expect(site.service.status().tables.every((t) => t.fed === true)).toBe(true);
    expect(formatStatus(site.status()).some((l) => l.includes('no source'))).toBe(false);
  }, 60_000);
});
