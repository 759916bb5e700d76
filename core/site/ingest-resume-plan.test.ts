// What an operator on the phone with a site needs about ingest that stopped (core/site/DESIGN.md,
// "Ingest that stopped: resumed in place"): /healthz said that it stopped and since when, not the
// plan — when the site tries next, how many tries it made, and what kind of failure the last one
// was (a full disk, a failing one, a damaged file) —, and `tilstand status` gave the time but not
// the tries. And once a resume in place had worked, the new Ingestor's counters in /metrics
// started from 0 again, so the site showed fewer events than it took since it started.
import mqtt from 'mqtt';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LsmError, TableWriter } from '../lsm/index.ts';
import { readModuleSecrets } from './demo/run.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';
import { formatStatus } from './status.ts';

let dir: string;
const closers: (() => unknown)[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-ingest-resume-plan-'));
});
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

const stockEvent = (seq: number, qty = seq * 10) =>
  JSON.stringify({ op: 'u', before: null, after: { item: `A-${seq}`, location: 'L1', qty }, source: { module: 'inventory', stream: 'stock', seq }, ts_ms: Date.now(), contract: { name: 'inventory.stock', version: 1 } });

/** Polls (at most `n` × 20 ms) until `ok` holds. */
async function until(ok: () => boolean, n = 250): Promise<void> {
  for (let k = 0; k < n && !ok(); k++) await new Promise((r) => setTimeout(r, 20));
}

/** TableWriter.commit of the stock table throws `fault()` while it returns an error. */
function faultyStock(): { set: (f: (() => Error) | undefined) => void } {
  let fault: (() => Error) | undefined;
  const real = TableWriter.prototype.commit;
  vi.spyOn(TableWriter.prototype, 'commit').mockImplementation(function (this: TableWriter, ...args: Parameters<TableWriter['commit']>) {
    if (fault && (this as unknown as { table: { name: string } }).table.name.endsWith('.stock')) throw fault();
    return real.apply(this, args);
  });
  return { set: (f) => (fault = f) };
}

async function startSite(name: string, backoff: { first: number; max: number }) {
  const data = join(dir, name);
  await initDataDir({ data, site: name, config: (c) => ({ ...c, tables: [...c.tables.filter((b) => b.table !== 'stock'), { table: 'stock', budgetMs: 200, decision: 'test', confirmedBy: 'test' }] }) });
  const lines: string[] = [];
  const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false, tickMs: 50, ingestResumeFirstMs: backoff.first, ingestResumeMaxMs: backoff.max, log: (l) => void lines.push(l) });
  closers.push(() => site.stop());
  const inv = readModuleSecrets(join(data, 'secrets', 'modules.json')).modules.inventory!;
  const client = await mqtt.connectAsync(site.mqttUrl, { username: inv.username, password: inv.password, clientId: `${name}-inventory`, protocolVersion: 4, reconnectPeriod: 0 });
  closers.push(() => client.endAsync(true));
  const publish = (payload: string) =>
    Promise.race([
      client.publishAsync(`tilstand/${name}/events/inventory/stock`, payload, { qos: 1 }),
      new Promise((_, reject) => setTimeout(() => reject(new Error('no PUBACK within 5 s')), 5_000).unref()),
    ]);
  const healthz = async () => (await (await fetch(`${site.httpUrl}/healthz`)).json()) as Record<string, unknown>;
  const metric = (m: string, label = '') => Number(new RegExp(`^${m}\\{[^}]*${label}[^}]*\\} (\\S+)$`, 'm').exec(site.metrics())?.[1]);
  return { data, site, lines, publish, healthz, metric };
}

describe('ingest that stopped: the plan, told', () => {
  it('/healthz and `tilstand status` say when the site tries next, how many tries it made and the kind of the last failure', async () => {
    const fault = faultyStock();
    const { site, lines, publish, healthz } = await startSite('pl', { first: 200, max: 200 });
    // Running: the fields are there, empty.
    expect(await healthz()).toMatchObject({ ok: true, ingestFailureKind: null, ingestResumeAtMs: null, ingestResumeTries: null, ingestResumeStopped: null });
    expect(site.status().ingestResumePlan).toBeUndefined();

    fault.set(() => new LsmError('IOError', `write of ${site.catalog.warehouse}/x failed: ENOSPC: no space left on device (injected)`));
    await publish(stockEvent(1));
    await until(() => site.ingestor.failure() !== null);
    const first = await healthz();
    expect(first).toMatchObject({ ok: false, ingestFailureKind: 'disk_full', ingestResumeTries: 0, ingestResumeStopped: null, ingestResumeAtMs: expect.any(Number) });
    // Still no text of the error (it names files of the data directory).
    expect(JSON.stringify(first)).not.toContain('ENOSPC');

    // Two tries fail, the second on another kind of failure: the kind is the last one's.
    await until(() => lines.some((l) => l.includes('resume in place failed (try 1)')));
    fault.set(() => new LsmError('IOError', 'EIO: injected'));
    await until(() => lines.some((l) => l.includes('resume in place failed (try 2)')));
    const h = await healthz();
    expect(h).toMatchObject({ ok: false, ingestFailureKind: 'io', ingestResumeStopped: null });
    expect(h.ingestResumeTries).toBeGreaterThanOrEqual(2);
    expect(h.ingestResumeAtMs as number).toBeGreaterThan(Date.now() - 1_000);
    const plan = site.status().ingestResumePlan!;
    expect(plan).toMatchObject({ tries: expect.any(Number), atMs: expect.any(Number), stopped: null, lastFailureKind: 'io' });
    expect(plan.tries).toBeGreaterThanOrEqual(2);
    const text = formatStatus(site.status());
    expect(text.find((l) => l.startsWith('  ingest resume:'))).toMatch(/^ {2}ingest resume: \d+ tries so far, the last failed on a failing disk \(io\); the next at \d{4}-\d\d-\d\dT[\d:.]+Z$/);

    // A damaged file: no next try, said as such.
    fault.set(() => new LsmError('Corruption', 'manifest-x: bad magic (injected)'));
    await until(() => lines.some((l) => l.startsWith('ingest: not resumed in place automatically')));
    const d = await healthz();
    expect(d).toMatchObject({ ok: false, ingestFailureKind: 'damaged', ingestResumeAtMs: null, ingestResumeStopped: 'damaged' });
    expect(formatStatus(site.status()).find((l) => l.startsWith('  ingest resume:'))).toMatch(/the last failed on a damaged file \(damaged\); no next try: fix or restore the file/);

    // Resumed: empty again.
    fault.set(undefined);
    await (site as unknown as { resumeIngestNow(): unknown }).resumeIngestNow();
    expect(await healthz()).toMatchObject({ ok: true, ingestFailureKind: null, ingestResumeAtMs: null, ingestResumeTries: null, ingestResumeStopped: null });
    expect(site.status().ingestResumePlan).toBeUndefined();
  }, 60_000);
});

describe('ingest resumed in place: counters', () => {
  it('carry over from the stopped Ingestor, each event counted once', async () => {
    const fault = faultyStock();
    // No automatic try within the test: the resume is asked for.
    const { site, publish, metric } = await startSite('ct', { first: 600_000, max: 600_000 });
    await publish(stockEvent(1));
    // Refused by the contract (a quantity that is no number): a dead letter.
    await publish(JSON.stringify({ ...JSON.parse(stockEvent(2)), after: { item: 'A-2', location: 'L1', qty: 'many' } }));
    await until(() => metric('tilstand_ingest_events_applied_total') === 1 && metric('tilstand_ingest_events_rejected_total', 'contract_violation') === 1);
    expect(metric('tilstand_ingest_events_accepted_total')).toBe(2);

    fault.set(() => new LsmError('IOError', 'EIO: injected'));
    await publish(stockEvent(3));
    await until(() => site.ingestor.failure() !== null);
    // Journaled while stopped.
    await publish(stockEvent(4));
    await publish(JSON.stringify({ ...JSON.parse(stockEvent(5)), after: { item: 'A-5', location: 'L1', qty: 'lots' } }));
    expect(metric('tilstand_ingest_events_accepted_total')).toBe(5);
    const rejectedBefore = metric('tilstand_ingest_events_rejected_total', 'contract_violation');
    // 1, and 3 unless the stock commit of 1 failed before 3 came (then 3 was only journaled).
    const appliedBefore = metric('tilstand_ingest_events_applied_total');
    expect([1, 2]).toContain(appliedBefore);

    // A try that fails (the disk still fails) counts nothing: what its open read is read again by the next.
    await expect((site as unknown as { resumeIngestNow(): Promise<unknown> }).resumeIngestNow()).rejects.toThrow(/EIO/);
    expect(metric('tilstand_ingest_events_applied_total')).toBe(appliedBefore);
    expect(metric('tilstand_ingest_events_rejected_total', 'contract_violation')).toBe(rejectedBefore);

    fault.set(undefined);
    await (site as unknown as { resumeIngestNow(): unknown }).resumeIngestNow();
    expect(site.ingestor.failure()).toBeNull();
    // Since the site started: the 5 it took, not 0.
    expect(metric('tilstand_ingest_events_accepted_total')).toBe(5);
    // Applied: 1, 3 and 4 once each (1 is read again at the reopen only where the table lacks it).
    expect(metric('tilstand_ingest_events_applied_total')).toBe(3);
    expect(metric('tilstand_ingest_events_rejected_total', 'contract_violation')).toBe(rejectedBefore + 1);
    expect(metric('tilstand_ingest_events_rejected_total', 'contract_violation')).toBe(2);
    expect(metric('tilstand_ingest_events_duplicate_total')).toBe(0);
    await publish(stockEvent(6));
    expect(metric('tilstand_ingest_events_accepted_total')).toBe(6);
  }, 60_000);
});
