// Ingest that stopped on an error is its own alarm kind, `ingest_stopped`, with the error as a
// value: it was raised as `disk_budget`, so whoever sorted, counted or worded alarms by kind (the
// floor's UI, a monitor reading `tilstand status --json`) read "disk budget" for a stopped ingest.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TableWriter } from '../lsm/index.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';
import { formatStatus } from './status.ts';

let dir: string;
const closers: (() => unknown)[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-ingest-stopped-'));
});
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

const stockEvent = (seq: number) =>
  Buffer.from(JSON.stringify({ op: 'u', before: null, after: { item: 'A-1', location: 'L1', qty: seq }, source: { module: 'inventory', stream: 'stock', seq }, ts_ms: Date.now(), contract: { name: 'inventory.stock', version: 1 } }));

/** Polls (at most `n` × 20 ms) until `ok` holds. */
async function until(ok: () => boolean, n = 150): Promise<void> {
  for (let k = 0; k < n && !ok(); k++) await new Promise((r) => setTimeout(r, 20));
}

describe('ingest_stopped', () => {
  it('is raised under its own kind with the failure as a value, and no disk_budget alarm with it', async () => {
    const realCommit = TableWriter.prototype.commit;
    let failStock = false;
    vi.spyOn(TableWriter.prototype, 'commit').mockImplementation(function (this: TableWriter, ...args: Parameters<TableWriter['commit']>) {
      if (failStock && (this as unknown as { table: { name: string } }).table.name.endsWith('.stock')) throw new Error('EIO: injected');
      return realCommit.apply(this, args);
    });
    const data = join(dir, 'is');
    await initDataDir({ data, site: 'is', config: (c) => ({ ...c, tables: [...c.tables.filter((b) => b.table !== 'stock'), { table: 'stock', budgetMs: 300, decision: 'test', confirmedBy: 'test' }] }) });
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    closers.push(() => site.stop());
    expect(site.service.status().alarms.filter((a) => a.kind === 'ingest_stopped')).toEqual([]);

    failStock = true;
    await site.ingestor.accept('tilstand/is/events/inventory/stock', stockEvent(1));
    await until(() => site.ingestor.health().failure !== null);
    const failure = site.ingestor.health().failure!;
    expect(failure).toMatch(/EIO: injected/);

    const alarms = site.service.status().alarms;
    const stopped = alarms.filter((a) => a.kind === 'ingest_stopped');
    expect(stopped).toHaveLength(1);
    expect(stopped[0]!.message).toBe(`ingest stopped: ${failure}; events are only journaled until the site is restarted (see logs/site.log)`);
    expect(stopped[0]!.params).toEqual({ failure });
    // The disk budget is not full: no alarm of that kind.
    expect(alarms.filter((a) => a.kind === 'disk_budget')).toEqual([]);
    // `tilstand status` names the kind as the alarm is.
    expect(formatStatus(site.status()).filter((l) => l.startsWith('ALARM ingest_stopped '))).toHaveLength(1);
    expect(formatStatus(site.status()).some((l) => l.startsWith('ALARM disk_budget '))).toBe(false);
  }, 30_000);
});
