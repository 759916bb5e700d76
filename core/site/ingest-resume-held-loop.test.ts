// A resume in place after a long stop reads every event journaled meanwhile (core/site/DESIGN.md,
// "Ingest that stopped: resumed in place"). It did so in one synchronous step, as a restart does,
// and held the event loop that long: no PUBACK, no /healthz, no UI while a day's events were read
// (about 4 s for 100,000 stock events on the 2-core development machine). The read now runs in
// slices (core/ingest `Ingestor.openInSlices`), the stopped Ingestor journaling and acknowledging
// meanwhile, and the switch to the new one comes in the step of the last slice: an event
// published during the read is applied once, after the ones before it.
import mqtt from 'mqtt';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { LsmError, TableWriter } from '../lsm/index.ts';
import { readModuleSecrets } from './demo/run.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';
import { formatStatus } from './status.ts';

let dir: string;
const closers: (() => unknown)[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-ingest-resume-loop-'));
});
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

const ITEMS = 500;
const stockEvent = (seq: number) =>
  Buffer.from(JSON.stringify({ op: 'u', before: null, after: { item: `A-${seq % ITEMS}`, location: 'L1', qty: seq }, source: { module: 'inventory', stream: 'stock', seq }, ts_ms: Date.now(), contract: { name: 'inventory.stock', version: 1 } }));

it('answers PUBACKs and /healthz while it reads what was journaled, and applies each event once', async () => {
  const N = 30_000;
  let fault = false;
  const real = TableWriter.prototype.commit;
  vi.spyOn(TableWriter.prototype, 'commit').mockImplementation(function (this: TableWriter, ...args: Parameters<TableWriter['commit']>) {
    if (fault && (this as unknown as { table: { name: string } }).table.name.endsWith('.stock')) throw new LsmError('IOError', 'EIO: injected');
    return real.apply(this, args);
  });
  const data = join(dir, 'hl');
  await initDataDir({ data, site: 'hl' });
  const lines: string[] = [];
  const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false, ingestResumeFirstMs: 600_000, ingestResumeMaxMs: 600_000, log: (l) => void lines.push(l) });
  closers.push(() => site.stop());
  const inv = readModuleSecrets(join(data, 'secrets', 'modules.json')).modules.inventory!;
  const client = await mqtt.connectAsync(site.mqttUrl, { username: inv.username, password: inv.password, clientId: 'hl-inventory', protocolVersion: 4, reconnectPeriod: 0 });
  closers.push(() => client.endAsync(true));

  fault = true;
  await site.ingestor.accept('tilstand/hl/events/inventory/stock', stockEvent(1));
  expect(() => site.ingestor.commitAll()).toThrow(/EIO/);
  // A long stop: the events are journaled and acknowledged, none applied.
  for (let b = 2; b <= N; b += 1000) {
    const batch: Promise<bigint>[] = [];
    for (let seq = b; seq < Math.min(b + 1000, N + 1); seq++) batch.push(site.ingestor.accept('tilstand/hl/events/inventory/stock', stockEvent(seq)));
    await Promise.all(batch);
  }
  fault = false;

  let done = false;
  const t0 = performance.now();
  const resumed = (site as unknown as { resumeIngestNow(): Promise<unknown> }).resumeIngestNow().finally(() => (done = true));
  // While it reads: /healthz answers, and an event gets its PUBACK (journaled by the stopped Ingestor).
  const health = (await (await fetch(`${site.httpUrl}/healthz`)).json()) as Record<string, unknown>;
  const answeredDuring = !done;
  // The floor's alarm meanwhile: a try under way, not "tries again at" the try's start, a time gone.
  const alarmDuring = done ? undefined : site.service.status().alarms.find((a) => a.kind === 'ingest_stopped');
  // And `tilstand status`: the try under way, not "the next at" its start, a time gone.
  const statusDuring = done ? undefined : formatStatus(site.status()).find((l) => l.startsWith('  ingest resume:'));
  await client.publishAsync('tilstand/hl/events/inventory/stock', stockEvent(N + 1), { qos: 1 });
  const pubackDuring = !done;
  await resumed;
  const tookMs = performance.now() - t0;
  console.log(`resume in place of ${N} journaled events: ${tookMs.toFixed(0)} ms`);
  expect(answeredDuring).toBe(true);
  expect(pubackDuring).toBe(true);
  // Told as a try under way.
  expect(health).toMatchObject({ ok: false, ingestResumeTries: 1, ingestResumeAtMs: null, ingestResumeRunningSinceMs: expect.any(Number) });
  expect(alarmDuring?.params).toMatchObject({ resumeRunning: 1 });
  expect(alarmDuring?.params).not.toHaveProperty('resumeAtMs');
  expect(statusDuring).toMatch(/^ {2}ingest resume: try 1 under way since \d{4}-\d\d-\d\dT[\d:.]+Z, reading what was journaled meanwhile; ingest stopped on a failing disk \(io\)$/);

  expect(site.ingestor.failure()).toBeNull();
  site.ingestor.commitAll();
  const t = site.catalog.getTable({ database: 'site_hl', table: 'stock' });
  const f = t.schema.fields.map((x) => x.name);
  const rows = new Map(t.scanRows().map((r) => [r[f.indexOf('item')] as string, Number(r[f.indexOf('on_hand')])]));
  expect(rows.size).toBe(ITEMS);
  // Each item's last event, the one published during the read included (seq N + 1).
  for (let k = 0; k < ITEMS; k++) {
    let last = N + 1;
    while (last % ITEMS !== k) last--;
    expect(rows.get(`A-${k}`)).toBe(last);
  }
  const metric = (m: string) => Number(new RegExp(`^${m}\\{[^}]*\\} (\\S+)$`, 'm').exec(site.metrics())?.[1]);
  expect(metric('tilstand_ingest_events_accepted_total')).toBe(N + 1);
  expect(metric('tilstand_ingest_events_applied_total')).toBe(N + 1);
  expect(metric('tilstand_ingest_events_duplicate_total')).toBe(0);
  expect(lines.some((l) => /^ingest resumed in place \(try 1, asked for/.test(l))).toBe(true);
}, 120_000);

it('gives the read up when the site stops meanwhile: the stop completes, and the next start applies every event', async () => {
  const N = 10_000;
  let fault = false;
  const real = TableWriter.prototype.commit;
  vi.spyOn(TableWriter.prototype, 'commit').mockImplementation(function (this: TableWriter, ...args: Parameters<TableWriter['commit']>) {
    if (fault && (this as unknown as { table: { name: string } }).table.name.endsWith('.stock')) throw new LsmError('IOError', 'EIO: injected');
    return real.apply(this, args);
  });
  const data = join(dir, 'st');
  await initDataDir({ data, site: 'st' });
  const lines: string[] = [];
  const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false, ingestResumeFirstMs: 600_000, ingestResumeMaxMs: 600_000, log: (l) => void lines.push(l) });
  fault = true;
  await site.ingestor.accept('tilstand/st/events/inventory/stock', stockEvent(1));
  expect(() => site.ingestor.commitAll()).toThrow(/EIO/);
  for (let b = 2; b <= N; b += 1000) {
    const batch: Promise<bigint>[] = [];
    for (let seq = b; seq < Math.min(b + 1000, N + 1); seq++) batch.push(site.ingestor.accept('tilstand/st/events/inventory/stock', stockEvent(seq)));
    await Promise.all(batch);
  }
  fault = false;
  const resumed = (site as unknown as { resumeIngestNow(): Promise<unknown> }).resumeIngestNow();
  const outcome = resumed.then(
    () => 'resumed',
    (e: Error) => e.message,
  );
  await site.stop();
  expect(await outcome).toMatch(/ingest did not resume: the reopen of ingest was given up: the site is stopping/);
  expect(lines.at(-1)).toBe('site stopped');
  // (Its commit of the stopped Ingestor says that it stopped, as any stop with ingest stopped does.)
  expect(lines.filter((l) => l.startsWith('stop: ') && !l.startsWith('stop: ingest commit: ingestor stopped'))).toEqual([]);

  const again = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false, log: () => {} });
  closers.push(() => again.stop());
  expect(again.ingestor.failure()).toBeNull();
  const t = again.catalog.getTable({ database: 'site_st', table: 'stock' });
  const f = t.schema.fields.map((x) => x.name);
  const rows = new Map(t.scanRows().map((r) => [r[f.indexOf('item')] as string, Number(r[f.indexOf('on_hand')])]));
  expect(rows.size).toBe(ITEMS);
  expect(rows.get(`A-${N % ITEMS}`)).toBe(N);
}, 120_000);
