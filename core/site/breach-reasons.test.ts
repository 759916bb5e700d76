// budget_breach gives the floor's UI why a table stays late as values (Alarm.params `held`,
// `streams`, `stopped`), not only in its English message: the renderer words nb and de from them.
// core/site/freshness-late.test.ts has the messages; renderer/src/i18n/alarm-reasons.test.ts the words.
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
  dir = mkdtempSync(join(tmpdir(), 'tilstand-breach-reasons-'));
});
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

const job = (seq: number, id: string) =>
  Buffer.from(JSON.stringify({ op: 'u', before: null, after: { job_id: id, status: 'released', capability: 'forklift', priority: 5 }, source: { module: 'operations', stream: 'jobs', seq }, ts_ms: Date.now(), contract: { name: 'operations.jobs', version: 1 } }));
const stockEvent = (seq: number) =>
  Buffer.from(JSON.stringify({ op: 'u', before: null, after: { item: 'A-1', location: 'L1', qty: seq }, source: { module: 'inventory', stream: 'stock', seq }, ts_ms: Date.now(), contract: { name: 'inventory.stock', version: 1 } }));
const short = (table: string) => ({ table, budgetMs: 300, decision: 'test: a short budget', confirmedBy: 'test' });

async function startSite(site: string, budgets: string[]): Promise<Site> {
  const data = join(dir, site);
  await initDataDir({ data, site, config: (c) => ({ ...c, tables: [...c.tables.filter((b) => !budgets.includes(b.table)), ...budgets.map(short)] }) });
  const s = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
  closers.push(() => s.stop());
  return s;
}

// The app's status (the site API the UIs read), which carries the alarms' params.
const breachOf = (site: Site, table: string) => site.service.status().alarms.find((a) => a.kind === 'budget_breach' && a.params?.table === table);

/** Polls (at most `n` × 20 ms) until `ok` holds. */
async function until(ok: () => boolean, n = 150): Promise<void> {
  for (let k = 0; k < n && !ok(); k++) await new Promise((r) => setTimeout(r, 20));
}

describe('budget_breach params say why the table is late', () => {
  it('held events: how many and the streams with a gap that feed the table (not another table\'s)', async () => {
    const site = await startSite('hp', ['work_queue', 'stock']);
    await site.ingestor.accept('tilstand/hp/events/operations/jobs', job(1, 'J-1'));
    await site.ingestor.accept('tilstand/hp/events/operations/jobs', job(3, 'J-1')); // seq 2 lost: held
    await site.ingestor.accept('tilstand/hp/events/operations/jobs', job(4, 'J-2'));
    await site.ingestor.accept('tilstand/hp/events/inventory/stock', stockEvent(1));
    await site.ingestor.accept('tilstand/hp/events/inventory/stock', stockEvent(3)); // a gap feeding stock only
    await until(() => breachOf(site, 'work_queue') !== undefined);
    const p = breachOf(site, 'work_queue')!.params!;
    expect(p).toMatchObject({ table: 'work_queue', held: 2, streams: 'operations/jobs' });
    expect(p).not.toHaveProperty('stopped');
    await until(() => breachOf(site, 'stock') !== undefined);
    expect(breachOf(site, 'stock')!.params).toMatchObject({ held: 1, streams: 'inventory/stock' });
    await site.ingestor.accept('tilstand/hp/events/operations/jobs', job(2, 'J-1'));
    await until(() => breachOf(site, 'work_queue') === undefined);
    expect(breachOf(site, 'work_queue')).toBeUndefined();
  }, 30_000);

  it('ingest stopped: stopped is 1, and no held count when nothing is held', async () => {
    const realCommit = TableWriter.prototype.commit;
    let failStock = false;
    vi.spyOn(TableWriter.prototype, 'commit').mockImplementation(function (this: TableWriter, ...args: Parameters<TableWriter['commit']>) {
      if (failStock && (this as unknown as { table: { name: string } }).table.name.endsWith('.stock')) throw new Error('EIO: injected');
      return realCommit.apply(this, args);
    });
    const site = await startSite('sp', ['work_queue', 'stock']);
    failStock = true;
    await site.ingestor.accept('tilstand/sp/events/inventory/stock', stockEvent(1));
    await until(() => site.ingestor.health().failure !== null);
    await site.ingestor.accept('tilstand/sp/events/operations/jobs', job(1, 'J-1')); // journaled, not applied
    await until(() => breachOf(site, 'work_queue') !== undefined);
    const p = breachOf(site, 'work_queue')!.params!;
    expect(p).toMatchObject({ table: 'work_queue', stopped: 1 });
    expect(p).not.toHaveProperty('held');
    expect(p).not.toHaveProperty('streams');
  }, 30_000);
});
