// Ingest that stopped on an error is its own alarm kind, `ingest_stopped`, with the error as a
// value: it was raised as `disk_budget`, so whoever sorted, counted or worded alarms by kind (the
// floor's UI, a monitor reading `tilstand status --json`) read "disk budget" for a stopped ingest.
// /healthz is unauthenticated: with ingest stopped by a file-system error it answered the error's
// text (`committing table stock: mkdir /…/manifest failed: …`), a path of the data directory to
// anyone who reaches the port. It now says that ingest stopped, since when, and the id of the log
// line that holds the whole error; the signed-in alarm and `tilstand status` keep the text.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
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
    // With the site's try to resume it in place (ingest-resume.test.ts).
    const resume = site.ingestResumeText()!;
    expect(resume).toMatch(/^the site tries to resume it at /);
    expect(stopped[0]!.message).toBe(`ingest stopped: ${failure}; events are only journaled until ingest resumes (${resume}) (see logs/site.log)`);
    // The same as values, for the floor's UI to word (renderer i18n): when the site tries next.
    const atMs = stopped[0]!.params!.resumeAtMs;
    expect(typeof atMs).toBe('number');
    expect(resume).toContain(new Date(atMs as number).toISOString());
    expect(stopped[0]!.params).toEqual({ failure, resume, resumeAtMs: atMs });
    // The disk budget is not full: no alarm of that kind.
    expect(alarms.filter((a) => a.kind === 'disk_budget')).toEqual([]);
    // `tilstand status` names the kind as the alarm is.
    expect(formatStatus(site.status()).filter((l) => l.startsWith('ALARM ingest_stopped '))).toHaveLength(1);
    expect(formatStatus(site.status()).some((l) => l.startsWith('ALARM disk_budget '))).toBe(false);
  }, 30_000);
});

describe('/healthz with ingest stopped', () => {
  it('says ingest stopped, since when and the log id, never the error text; the log has the whole error under that id', async () => {
    const data = join(dir, 'hz');
    // The error a full or damaged disk gives: its message names a path inside the data directory.
    const secretPath = join(data, 'warehouse', 'site_hz.db', 'stock', 'manifest');
    const realCommit = TableWriter.prototype.commit;
    let failStock = false;
    vi.spyOn(TableWriter.prototype, 'commit').mockImplementation(function (this: TableWriter, ...args: Parameters<TableWriter['commit']>) {
      if (failStock && (this as unknown as { table: { name: string } }).table.name.endsWith('.stock')) throw new Error(`mkdir ${secretPath} failed: EEXIST`);
      return realCommit.apply(this, args);
    });
    await initDataDir({ data, site: 'hz', config: (c) => ({ ...c, tables: [...c.tables.filter((b) => b.table !== 'stock'), { table: 'stock', budgetMs: 300, decision: 'test', confirmedBy: 'test' }] }) });
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    closers.push(() => site.stop());
    const healthz = async () => (await (await fetch(`${site.httpUrl}/healthz`)).json()) as Record<string, unknown>;
    expect(await healthz()).toEqual({
      ok: true,
      site: 'hz',
      ingestFailure: null,
      ingestStoppedAtMs: null,
      ingestErrorId: null,
      ingestFailureKind: null,
      ingestResumeAtMs: null,
      ingestResumeTries: null,
      ingestResumeRunningSinceMs: null,
      ingestResumeStopped: null,
      diskFull: false,
      mqtt: site.mqttUrl,
    });

    const before = Date.now();
    failStock = true;
    await site.ingestor.accept('tilstand/hz/events/inventory/stock', stockEvent(1));
    await until(() => site.ingestor.health().failure !== null);
    expect(site.ingestor.health().failure).toContain(secretPath);
    // Seen by the site's tick before anyone asked /healthz: its time is when it stopped.
    await new Promise((r) => setTimeout(r, 600));
    const after = Date.now();

    const res = await fetch(`${site.httpUrl}/healthz`);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).not.toContain(data);
    expect(text).not.toContain('EEXIST');
    const body = JSON.parse(text) as Record<string, unknown>;
    const id = body.ingestErrorId as string;
    expect(id).toMatch(/^[0-9a-f]{8}$/);
    expect(body).toEqual({
      ok: false,
      site: 'hz',
      ingestFailure: `ingest stopped (error id ${id}); the site's log (logs/site.log) has the details under that id`,
      ingestStoppedAtMs: expect.any(Number),
      ingestErrorId: id,
      // The plan (ingest-resume-plan.test.ts): an error that names no disk failure, no try yet.
      ingestFailureKind: 'other',
      ingestResumeAtMs: expect.any(Number),
      ingestResumeTries: 0,
      ingestResumeRunningSinceMs: null,
      ingestResumeStopped: null,
      diskFull: false,
      mqtt: site.mqttUrl,
    });
    expect(body.ingestStoppedAtMs as number).toBeGreaterThanOrEqual(before);
    expect(body.ingestStoppedAtMs as number).toBeLessThanOrEqual(after - 500);
    // The same failure keeps its id and time.
    expect(await healthz()).toEqual(body);

    const log = readFileSync(join(data, 'logs', 'site.log'), 'utf8');
    expect(log.match(new RegExp(`ingest stopped \\(error id ${id}\\): .*mkdir ${secretPath.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} failed: EEXIST`, 'g'))).toHaveLength(1);
    // Signed-in readers and the CLI keep the text.
    expect(site.status().ingestFailure).toContain(secretPath);
    expect(site.service.status().alarms.find((a) => a.kind === 'ingest_stopped')?.message).toContain(secretPath);
  }, 30_000);
});
