// Each table's age against its budget, as a site reports it: `tilstand status` on a directory, the
// running site's commits for a short budget.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_TABLE_BUDGETS } from '../ingest/freshness.ts';
import { initDataDir } from './init.ts';
import { openIngest } from './open-ingest.ts';
import { readConfig } from './config.ts';
import { Site } from './site.ts';
import { formatStatus, statusFromDirectory } from './status.ts';

let dir: string;
const closers: (() => unknown)[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-freshness-'));
});
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
  rmSync(dir, { recursive: true, force: true });
});

const byName = (name: string) => DEFAULT_TABLE_BUDGETS.find((b) => b.table === name)!;

describe('tilstand status of a site that is not running', () => {
  it('lists every table the site keeps, with the default budget where config.json names none, and counts the open dead letters', async () => {
    const data = join(dir, 'd');
    // The site confirmed stock's budget only: config `tables` names that one (and the inbox's).
    const stock = { table: 'stock', budgetMs: 300_000, decision: 'picking waits for stock', confirmedBy: 'site lead' };
    await initDataDir({ data, site: 'st', config: (c) => ({ ...c, tables: [byName('approval_inbox'), stock] }) });
    const ingest = openIngest(data, readConfig(data));
    try {
      for (let k = 0; k < 3; k++) await ingest.ingestor.accept('tilstand/st/events/inventory/stock', Buffer.from(`{junk ${k}`));
      ingest.ingestor.commitAll();
      // What the running site would say (its Ingestor's tables and budgets).
      expect(ingest.ingestor.status().map((t) => [t.table, t.budgetMs])).toEqual([
        ['work_queue', 60_000],
        ['resources', 60_000],
        ['stock', 300_000],
        ['dead_letters', 2_000],
      ]);
    } finally {
      ingest.ingestor.close();
      ingest.journal.close();
    }
    const s = statusFromDirectory(data);
    expect(s.tables.map((t) => [t.table, t.budgetMs, t.decision])).toEqual([
      ['work_queue', 60_000, byName('work_queue').decision],
      ['resources', 60_000, byName('resources').decision],
      ['stock', 300_000, 'picking waits for stock'],
      ['dead_letters', 2_000, byName('dead_letters').decision],
    ]);
    expect(s.deadLettersOpen).toBe(3);
    expect(s.tables.find((t) => t.table === 'dead_letters')).toMatchObject({ rows: 3, ageMs: null, withinBudget: null });
  });
});

describe('a running site keeps a short budget', () => {
  it('commits a table with a 300 ms budget before it is 300 ms old: its tick comes often enough', async () => {
    const data = join(dir, 'd');
    const short = { table: 'dead_letters', budgetMs: 300, decision: 'a refused event shows at once', confirmedBy: 'test' };
    await initDataDir({ data, site: 'sb', config: (c) => ({ ...c, tables: [...c.tables.filter((b) => b.table !== 'dead_letters'), short] }) });
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    closers.push(() => site.stop());
    const seed = Number(process.env.TILSTAND_TEST_SEED ?? Date.now() % 1_000_000);
    console.log(`freshness-status: seed ${seed}`);
    let x = seed;
    const rand = () => ((x = (x * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648);
    // Refused events, each its own episode (the last one committed before the next comes), at
    // moments spread over the tick's period. With a 250 ms tick half the budget (150 ms) leaves too
    // little for the wait until the next tick: about two in five were seen over the budget. With a
    // tick of a quarter of the budget the margin is 75 ms, so an event loop held up longer than
    // that (a loaded CI machine: other workers, fsyncs) makes a breach the design allows. Such an
    // episode is told apart by the loop's delay in it and not counted. Up to fifteen clean episodes,
    // at least ten (at 250 ms, ten clean episodes without a breach come about once in 170 runs,
    // fifteen once in 2,000). Letters go on until fifteen are clean, or ten once forty were sent
    // (enough on a quiet machine), for at most 60 s or 150 letters: under a load of 12–17 on two
    // cores four in five episodes had the loop held, and forty letters gave 7 or 8 clean ones.
    // An episode whose journal wait (accept) took over 100 ms is not counted either.
    const dl = () => site.ingestor.status().find((t) => t.table === 'dead_letters')!;
    const STALL_MS = 50;
    const t0 = performance.now();
    let sent = 0;
    let clean = 0;
    const stalls: string[] = [];
    const enough = () => clean >= 15 || (clean >= 10 && sent >= 40);
    for (; !enough() && sent < 150 && performance.now() - t0 < 60_000; sent++) {
      await new Promise((r) => setTimeout(r, 350 + Math.floor(rand() * 250)));
      const before = dl().breaches;
      const loop = monitorEventLoopDelay({ resolution: 10 });
      loop.enable();
      const a0 = performance.now();
      await site.ingestor.accept('tilstand/sb/events/inventory/stock', Buffer.from(`{junk ${sent}`));
      // Its age counts from before the journal's wait (fsync, off the loop): a wait past half the
      // budget less the margin leaves the tick too little, a breach the design allows too.
      const journalMs = performance.now() - a0;
      for (let w = 0; w < 100 && dl().pendingEvents > 0; w++) await new Promise((r) => setTimeout(r, 10));
      loop.disable();
      expect(dl().pendingEvents, `letter ${sent} committed`).toBe(0);
      const heldMs = loop.max / 1e6 - 10; // its samples are whole intervals of the 10 ms timer
      if (heldMs > STALL_MS || journalMs > 150 - STALL_MS) {
        stalls.push(`letter ${sent}: loop held ${Math.round(heldMs)} ms, journal ${Math.round(journalMs)} ms, ${dl().breaches - before} breach(es)`);
        continue;
      }
      clean++;
      expect(dl().breaches - before, `letter ${sent}: over the budget with the event loop held at most ${Math.round(heldMs)} ms, journal ${Math.round(journalMs)} ms (seed ${seed})`).toBe(0);
    }
    if (stalls.length > 0) console.log(`freshness-status: not counted (event loop held or journal slow): ${stalls.join('; ')}`);
    console.log(`freshness-status: ${clean} clean of ${sent} letters in ${Math.round((performance.now() - t0) / 1000)} s`);
    expect(site.ingestor.deadLetterCount()).toBe(sent);
    expect(clean, `clean episodes of ${sent} in ${Math.round((performance.now() - t0) / 1000)} s (${stalls.length} with the event loop held or the journal slow)`).toBeGreaterThanOrEqual(10);
  }, 120_000);
});

describe("the PC's wall clock steps while a site runs", () => {
  it('keeps its uptime, and a stream not heard from since the start is not silent for the step', async () => {
    const data = join(dir, 'd');
    await initDataDir({ data, site: 'wc', config: (c) => ({ ...c, alarms: { streamSilentMs: { '*': 60_000 } } }) });
    // One event of inventory/stock, so the next start knows the stream from the tables.
    const first = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    const event = { op: 'u', before: null, after: { item: 'A-1', location: 'L1', qty: 3 }, source: { module: 'inventory', stream: 'stock', seq: 1 }, ts_ms: Date.now(), contract: { name: 'inventory.stock', version: 1 } };
    await first.ingestor.accept('tilstand/wc/events/inventory/stock', Buffer.from(JSON.stringify(event)));
    await first.stop();
    // Every wall-clock reader of the site (captured at its start) sees `step` added: the PC's clock set.
    const realNow = Date.now.bind(Date);
    let step = 0;
    const clock = vi.spyOn(Date, 'now').mockImplementation(() => realNow() + step);
    closers.push(() => clock.mockRestore());
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    closers.push(() => site.stop());
    const silent = () => (site.status().alarms ?? []).filter((a) => a.kind === 'stream_silent');
    const up = () => formatStatus(site.status())[0]!;
    const uptime = () => Number(/^tilstand_site_uptime_seconds\{[^}]*\} (-?\d+)$/m.exec(site.metrics())![1]);
    expect(site.status().streams!.find((v) => v.stream === 'inventory/stock')).toMatchObject({ lastEventMs: null, silentAllowedMs: 60_000, silent: false });
    expect(silent()).toEqual([]);
    step = 3_600_000; // set an hour ahead
    expect(silent()).toEqual([]);
    expect(up()).toMatch(/, up \d+(\.\d)? (ms|s)\)/);
    expect(uptime()).toBeLessThan(60);
    step = -3_600_000; // and an hour back
    expect(up()).toMatch(/, up \d+(\.\d)? (ms|s)\)/);
    expect(uptime()).toBeGreaterThanOrEqual(0);
    expect(uptime()).toBeLessThan(60);
    expect(silent()).toEqual([]);
  }, 60_000);
});
