// What a running site shows when a table is behind what it has received: events held behind a
// gap, ingest stopped on an error (budget_breach); and a stream's silence across a step of the
// PC's clock (stream_silent). core/ingest/freshness-late.test.ts has the Ingestor's side.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TableWriter } from '../lsm/index.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';

let dir: string;
const closers: (() => unknown)[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-freshness-late-'));
});
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

const job = (site: string, seq: number, id: string) =>
  Buffer.from(JSON.stringify({ op: 'u', before: null, after: { job_id: id, status: 'released', capability: 'forklift', priority: 5 }, source: { module: 'operations', stream: 'jobs', seq }, ts_ms: Date.now(), contract: { name: 'operations.jobs', version: 1 } }));
const stockEvent = (seq: number) =>
  Buffer.from(JSON.stringify({ op: 'u', before: null, after: { item: 'A-1', location: 'L1', qty: seq }, source: { module: 'inventory', stream: 'stock', seq }, ts_ms: Date.now(), contract: { name: 'inventory.stock', version: 1 } }));
const short = (table: string) => ({ table, budgetMs: 300, decision: 'test: a short budget', confirmedBy: 'test' });

async function startSite(site: string, budgets: string[], extra: Record<string, unknown> = {}): Promise<Site> {
  const data = join(dir, site);
  await initDataDir({ data, site, config: (c) => ({ ...c, ...extra, tables: [...c.tables.filter((b) => !budgets.includes(b.table)), ...budgets.map(short)] }) });
  const s = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
  closers.push(() => s.stop());
  return s;
}

const breachOf = (site: Site, table: string) => (site.status().alarms ?? []).find((a) => a.kind === 'budget_breach' && a.message.startsWith(`${table} `));

/** Polls (at most `n` × 20 ms) until `ok` holds. */
async function until(ok: () => boolean, n = 150): Promise<void> {
  for (let k = 0; k < n && !ok(); k++) await new Promise((r) => setTimeout(r, 20));
}

describe('a table behind what the site has received shows late on the screen', () => {
  it('while an event for it waits behind a missing seq: budget_breach names the wait; the resend clears it', async () => {
    const site = await startSite('gp', ['work_queue']);
    const topic = 'tilstand/gp/events/operations/jobs';
    await site.ingestor.accept(topic, job('gp', 1, 'J-1'));
    await site.ingestor.accept(topic, job('gp', 3, 'J-1')); // seq 2 lost: held (resync asked after 2 s, skipped after 5 min)
    // What is proved: once seq 1 has committed (nothing pending), the held seq 3 alone keeps the
    // table over its budget. So wait for both: on a loaded machine seq 1's commit can itself come
    // after 300 ms (a breach the design allows: freshness-status.test.ts), and the alarm then shows
    // while seq 1 is still pending.
    const wqNow = () => site.status().tables.find((t) => t.table === 'work_queue')!;
    await until(() => breachOf(site, 'work_queue') !== undefined && wqNow().pendingEvents === 0);
    const wq = wqNow();
    expect(wq).toMatchObject({ pendingEvents: 0, withinBudget: false });
    expect(wq.ageMs).toBeGreaterThan(300);
    expect(breachOf(site, 'work_queue')!.message).toMatch(/^work_queue is \d+ s old; its budget is \d+ s \(test: a short budget\); 1 event for it waits behind a missing one \(streams: gap\)$/);
    expect(site.status().streams!.find((v) => v.stream === 'operations/jobs')!.gap).toMatchObject({ from: 2, to: 2 });
    await site.ingestor.accept(topic, job('gp', 2, 'J-1'));
    await until(() => breachOf(site, 'work_queue') === undefined);
    expect(site.status().tables.find((t) => t.table === 'work_queue')).toMatchObject({ pendingEvents: 0, withinBudget: true, ageMs: 0 });
  }, 30_000);

  it('once ingest has stopped: a table whose events are now only journaled goes over its budget', async () => {
    const realCommit = TableWriter.prototype.commit;
    let failStock = false;
    vi.spyOn(TableWriter.prototype, 'commit').mockImplementation(function (this: TableWriter, ...args: Parameters<TableWriter['commit']>) {
      // An I/O error committing stock: ingest stops applying and committing.
      if (failStock && (this as unknown as { table: { name: string } }).table.name.endsWith('.stock')) throw new Error('EIO: injected');
      return realCommit.apply(this, args);
    });
    const site = await startSite('st', ['work_queue', 'stock']);
    failStock = true;
    await site.ingestor.accept('tilstand/st/events/inventory/stock', stockEvent(1));
    await until(() => site.ingestor.health().failure !== null);
    expect(site.ingestor.health().failure).toMatch(/committing table stock: EIO: injected/);
    await site.ingestor.accept('tilstand/st/events/operations/jobs', job('st', 1, 'J-1')); // journaled, not applied
    await until(() => breachOf(site, 'work_queue') !== undefined);
    expect(site.status().tables.find((t) => t.table === 'work_queue')).toMatchObject({ pendingEvents: 0, withinBudget: false });
    expect(breachOf(site, 'work_queue')!.message).toMatch(/; ingest stopped, events are only journaled$/);
    // resources got nothing: it is not behind anything received.
    expect(site.status().tables.find((t) => t.table === 'resources')).toMatchObject({ ageMs: 0, withinBudget: true });
  }, 30_000);
});

describe("a stream's silence across a step of the PC's clock", () => {
  it('a stream that sent an event is not silent when the clock is set an hour ahead, and its next event counts after one set back', async () => {
    // Every wall-clock reader of the site (captured at its start) sees `step` added: the PC's clock set.
    const realNow = Date.now.bind(Date);
    let step = 0;
    vi.spyOn(Date, 'now').mockImplementation(() => realNow() + step);
    const site = await startSite('wc', [], { alarms: { streamSilentMs: { '*': 60_000 } } });
    const topic = 'tilstand/wc/events/operations/jobs';
    await site.ingestor.accept(topic, job('wc', 1, 'J-1'));
    const silent = () => (site.status().alarms ?? []).filter((a) => a.kind === 'stream_silent');
    const jobs = () => site.status().streams!.find((v) => v.stream === 'operations/jobs')!;
    expect(jobs()).toMatchObject({ lastSeq: 1, silent: false });
    step = 3_600_000; // set an hour ahead
    expect(silent()).toEqual([]);
    expect(jobs().silent).toBe(false);
    expect(Date.now() - jobs().lastEventMs!).toBeLessThan(60_000);
    step = -3_600_000; // and an hour back
    await site.ingestor.accept(topic, job('wc', 2, 'J-2'));
    expect(jobs()).toMatchObject({ lastSeq: 2, silent: false });
    expect(Math.abs(Date.now() - jobs().lastEventMs!)).toBeLessThan(60_000);
    expect(silent()).toEqual([]);
  }, 30_000);
});
