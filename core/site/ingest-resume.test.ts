// Ingest that stopped on an error resumes in place (core/site/DESIGN.md, "Ingest that stopped"):
// the site tries `releaseStopped` + a new Ingestor on the same journal after a backoff (doubling),
// rewires the broker's sink, the letter listener and the metrics to it and clears the alarm; a
// damaged file is not retried (the alarm says so) until `tilstand ingest resume` asks. Before,
// ingest that stopped journaled and acknowledged every event and changed no table until a restart.
// The fault is injected at the table store's edge (TableWriter.commit throws as a failing disk
// would); the tests run as root here, where a read-only directory does not fail a write.
import mqtt from 'mqtt';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LsmError, TableWriter } from '../lsm/index.ts';
import { runMain } from './cli/test-support.ts';
import { readModuleSecrets } from './demo/run.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';
import { formatStatus } from './status.ts';

let dir: string;
const closers: (() => unknown)[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-ingest-resume-'));
});
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
  vi.restoreAllMocks();
  rmSync(dir, { recursive: true, force: true });
});

const stockEvent = (site: string, seq: number) =>
  JSON.stringify({ op: 'u', before: null, after: { item: `A-${seq}`, location: 'L1', qty: seq * 10 }, source: { module: 'inventory', stream: 'stock', seq }, ts_ms: Date.now(), contract: { name: 'inventory.stock', version: 1 } });

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

async function startSite(name: string, lines: string[], backoff: { first: number; max: number }) {
  const data = join(dir, name);
  await initDataDir({ data, site: name, config: (c) => ({ ...c, tables: [...c.tables.filter((b) => b.table !== 'stock'), { table: 'stock', budgetMs: 200, decision: 'test', confirmedBy: 'test' }] }) });
  const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false, tickMs: 50, ingestResumeFirstMs: backoff.first, ingestResumeMaxMs: backoff.max, log: (l) => void lines.push(l) });
  closers.push(() => site.stop());
  const inv = readModuleSecrets(join(data, 'secrets', 'modules.json')).modules.inventory!;
  const client = await mqtt.connectAsync(site.mqttUrl, { username: inv.username, password: inv.password, clientId: `${name}-inventory`, protocolVersion: 4, reconnectPeriod: 0 });
  closers.push(() => client.endAsync(true));
  // Acknowledged within 5 s, or the test fails (a sink left on a closed Ingestor never acknowledges).
  const publish = (seq: number) =>
    Promise.race([
      client.publishAsync(`tilstand/${name}/events/inventory/stock`, stockEvent(name, seq), { qos: 1 }),
      new Promise((_, reject) => setTimeout(() => reject(new Error(`seq ${seq}: no PUBACK within 5 s`)), 5_000).unref()),
    ]);
  /** The stock table's rows as item → qty, read from its files. */
  const stock = () => {
    const t = site.catalog.getTable({ database: `site_${name}`, table: 'stock' });
    const f = t.schema.fields.map((x) => x.name);
    return new Map(t.scanRows().map((r) => [r[f.indexOf('item')] as string, Number(r[f.indexOf('on_hand')])]));
  };
  const metric = (name: string) => Number(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, 'm').exec(site.metrics())?.[1]);
  return { data, site, publish, stock, metric };
}

const expected = (seqs: number[]) => new Map(seqs.map((s) => [`A-${s}`, s * 10]));

describe('ingest resumes in place', () => {
  it('after a failing disk: retried with a doubling wait, alarm cleared once it writes, every journaled event applied once', async () => {
    const fault = faultyStock();
    const lines: string[] = [];
    const { site, publish, stock, metric } = await startSite('rs', lines, { first: 300, max: 1200 });
    await publish(1);
    await until(() => stock().size === 1);
    expect(stock()).toEqual(expected([1]));

    fault.set(() => new LsmError('IOError', 'EIO: injected write failure'));
    const first = site.ingestor;
    await publish(2);
    await until(() => site.ingestor.failure() !== null);
    expect(site.ingestor.failure()?.message).toMatch(/EIO: injected/);
    // Journaled and acknowledged while stopped.
    for (const seq of [3, 4]) await publish(seq);
    await until(() => site.service.status().alarms.some((a) => a.kind === 'ingest_stopped'));
    const alarm = site.service.status().alarms.find((a) => a.kind === 'ingest_stopped')!;
    // (With the first try's error once it has failed: the tries go on meanwhile.)
    expect(alarm.message).toMatch(/events are only journaled until ingest resumes \(the site tries to resume it at \d{4}-\d\d-\d\dT[\d:.]+Z( \(the last try failed: [^)]*\))?; `tilstand ingest resume` tries now\)/);
    expect(alarm.params).toMatchObject({ failure: expect.stringMatching(/EIO/), resume: expect.any(String) });
    expect(formatStatus(site.status()).find((l) => l.startsWith('INGEST STOPPED'))).toMatch(/the site tries to resume it at/);

    // The first try meets the fault still there: it fails, and the next waits twice as long.
    await until(() => lines.some((l) => l.includes('resume in place failed (try 1)')));
    expect(lines.some((l) => l.includes('resume in place failed (try 1)'))).toBe(true);
    expect(lines).toContain('ingest: resuming in place in 1 s (try 2); meanwhile events are journaled and acknowledged');
    expect(site.ingestor.failure()).not.toBeNull();
    await publish(5);
    expect(stock()).toEqual(expected([1]));

    // The cause is gone: the next try resumes, the alarm clears, and what was journaled meanwhile is applied.
    fault.set(undefined);
    await until(() => site.ingestor.failure() === null, 400);
    expect(site.ingestor.failure()).toBeNull();
    expect(site.ingestor).not.toBe(first);
    expect(lines.some((l) => /^ingest resumed in place \(try 2; it had stopped with error id [0-9a-f]{8}/.test(l))).toBe(true);
    await until(() => stock().size === 5);
    expect(stock()).toEqual(expected([1, 2, 3, 4, 5]));
    expect(site.service.status().alarms.filter((a) => a.kind === 'ingest_stopped')).toEqual([]);
    expect((await (await fetch(`${site.httpUrl}/healthz`)).json()) as Record<string, unknown>).toMatchObject({ ok: true, ingestFailure: null });

    // The broker's sink feeds the new Ingestor, and the metrics are its.
    await publish(6);
    await until(() => stock().size === 6);
    expect(stock()).toEqual(expected([1, 2, 3, 4, 5, 6]));
    expect(metric('tilstand_ingest_failed')).toBe(0);
    expect(metric('tilstand_ingest_events_duplicate_total')).toBe(0);
    // Counted since the site started: the stopped Ingestor's counts go on (ingest-resume-plan.test.ts).
    expect(metric('tilstand_ingest_events_accepted_total')).toBe(6);
    expect(site.ingestor.deadLetterCount()).toBe(0);
  }, 60_000);

  it('loses and doubles no event handed to the stopped Ingestor while the switch is made', async () => {
    const fault = faultyStock();
    const lines: string[] = [];
    // No automatic try within the test: the switch is asked for while accepts wait for the journal.
    const { site, stock, metric } = await startSite('sw', lines, { first: 600_000, max: 600_000 });
    fault.set(() => new LsmError('IOError', 'EIO: injected'));
    await site.ingestor.accept('tilstand/sw/events/inventory/stock', Buffer.from(stockEvent('sw', 1)));
    await until(() => site.ingestor.failure() !== null);
    fault.set(undefined);
    const stopped = site.ingestor;
    // Queued in the journal's next group commit, not yet on disk, when the resume runs: as when
    // the retry's timer runs right after a timer that handed an event on (the external broker's
    // sink, waiting for room on the disk). The resume is called in the same turn for that.
    const pending = [2, 3, 4].map((seq) => stopped.accept('tilstand/sw/events/inventory/stock', Buffer.from(stockEvent('sw', seq))));
    const r = await (site as unknown as { resumeIngest(why: 'retry' | 'manual'): Promise<{ resumed: boolean }> }).resumeIngest('retry');
    expect(r).toEqual({ resumed: true });
    const positions = await Promise.all(pending);
    expect(positions).toEqual([2n, 3n, 4n]);
    expect(site.ingestor).not.toBe(stopped);
    site.ingestor.commitAll();
    expect(stock()).toEqual(expected([1, 2, 3, 4]));
    expect(metric('tilstand_ingest_events_duplicate_total')).toBe(0);
    expect(site.ingestor.health().frontier).toBe(4n);
    // Asked again, with ingest running: said, nothing done.
    const again = await runMain(['ingest', 'resume', '--data', join(dir, 'sw')]);
    expect(again).toMatchObject({ code: 0 });
    expect(again.out).toMatch(/ingest is running on .*: nothing to resume/);
  }, 60_000);

  it('does not retry a damaged file: the alarm keeps saying why, until `tilstand ingest resume` after the repair', async () => {
    const fault = faultyStock();
    const lines: string[] = [];
    const { data, site, publish, stock } = await startSite('dm', lines, { first: 100, max: 400 });
    fault.set(() => new LsmError('Corruption', 'manifest-x: bad magic (injected)'));
    await publish(1);
    await until(() => site.ingestor.failure() !== null);
    await until(() => site.service.status().alarms.some((a) => a.kind === 'ingest_stopped'));
    // Well past several backoffs: no try was made.
    await new Promise((r) => setTimeout(r, 800));
    expect(lines.some((l) => l.includes('resume in place failed'))).toBe(false);
    expect(lines.some((l) => l.startsWith('ingest: not resumed in place automatically: the error is a damaged file'))).toBe(true);
    const alarm = site.service.status().alarms.find((a) => a.kind === 'ingest_stopped')!;
    expect(alarm.message).toMatch(/until ingest resumes \(not retried: the error is a damaged file, which a reopen reads again and fails on; fix or restore the file, then `tilstand ingest resume` or restart the site\)/);
    // As a value for the floor's UI too (renderer i18n), and no time of a next try.
    expect(alarm.params).toMatchObject({ resumeStopped: 'damaged' });
    expect(alarm.params).not.toHaveProperty('resumeAtMs');

    // Asked while it still fails: the CLI says so (exit 4, corruption, as every command says a
    // damaged file; 5 is a disk that fails), the site stays stopped and journaling.
    const failing = await runMain(['ingest', 'resume', '--data', data]);
    expect(failing.code).toBe(4);
    expect(failing.err).toMatch(/ingest did not resume: .*bad magic/);
    expect(site.ingestor.failure()).not.toBeNull();
    await publish(2);

    fault.set(undefined);
    const ok = await runMain(['ingest', 'resume', '--data', data]);
    expect(ok).toMatchObject({ code: 0 });
    expect(site.ingestor.failure()).toBeNull();
    await until(() => stock().size === 2);
    expect(stock()).toEqual(expected([1, 2]));
    expect(readFileSync(join(data, 'logs', 'site.log'), 'utf8')).toMatch(/ingest resumed in place \(try \d, asked for/);
  }, 60_000);

  it('goes back to retrying with the backoff when a resume asked for after a damaged file fails on a disk that fails', async () => {
    const fault = faultyStock();
    const lines: string[] = [];
    const { data, site, publish, stock } = await startSite('dt', lines, { first: 300, max: 1200 });
    fault.set(() => new LsmError('Corruption', 'manifest-x: bad magic (injected)'));
    await publish(1);
    await until(() => site.ingestor.failure() !== null);
    await until(() => site.service.status().alarms.some((a) => a.kind === 'ingest_stopped'));
    expect(site.service.status().alarms.find((a) => a.kind === 'ingest_stopped')!.params).toMatchObject({ resumeStopped: 'damaged' });

    // The file was restored; now the disk fails (transient): the asked-for try fails, exit 5 (I/O)…
    fault.set(() => new LsmError('IOError', 'ENOSPC: injected full disk'));
    const failing = await runMain(['ingest', 'resume', '--data', data]);
    expect(failing.code).toBe(5);
    expect(failing.err).toMatch(/ingest did not resume: .*ENOSPC.*; the site tries again at \d{4}-/);
    // …and the site tries again by itself, with the backoff, as after any error that is no damage.
    expect(lines.some((l) => /^ingest: resuming in place in \d+ s \(try 2\)/.test(l))).toBe(true);
    const alarm = site.service.status().alarms.find((a) => a.kind === 'ingest_stopped')!;
    expect(alarm.params).toMatchObject({ resumeAtMs: expect.any(Number) });
    expect(alarm.params).not.toHaveProperty('resumeStopped');
    expect(alarm.message).toMatch(/the site tries to resume it at .*\(the last try failed: .*ENOSPC/);
    expect(formatStatus(site.status()).find((l) => l.startsWith('INGEST STOPPED'))).toMatch(/the site tries to resume it at/);

    // The disk has room again: the planned try resumes without anyone asking.
    fault.set(undefined);
    await until(() => site.ingestor.failure() === null, 400);
    expect(site.ingestor.failure()).toBeNull();
    expect(lines.some((l) => /^ingest resumed in place \(try [2-9];/.test(l))).toBe(true);
    await publish(2);
    await until(() => stock().size === 2);
    expect(stock()).toEqual(expected([1, 2]));
  }, 60_000);

  it('says the planned try, not "restart", from the moment ingest stops (before the tick notes it)', async () => {
    const fault = faultyStock();
    const data = join(dir, 'nt');
    await initDataDir({ data, site: 'nt' });
    const lines: string[] = [];
    // A tick that does not come within the test: status and the alarm are read before it.
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false, tickMs: 600_000, ingestResumeFirstMs: 600_000, ingestResumeMaxMs: 600_000, log: (l) => void lines.push(l) });
    closers.push(() => site.stop());
    fault.set(() => new LsmError('IOError', 'EIO: injected'));
    await site.ingestor.accept('tilstand/nt/events/inventory/stock', Buffer.from(stockEvent('nt', 1)));
    expect(() => site.ingestor.commitAll()).toThrow(/EIO/);
    expect(site.ingestor.failure()).not.toBeNull();
    const line = formatStatus(site.status()).find((l) => l.startsWith('INGEST STOPPED'));
    expect(line).toMatch(/the site tries to resume it at/);
    expect(line).not.toMatch(/restart the site to recover/);
    const alarm = site.service.status().alarms.find((a) => a.kind === 'ingest_stopped')!;
    expect(alarm.message).toMatch(/until ingest resumes \(the site tries to resume it at/);
    expect(alarm.params).toMatchObject({ resumeAtMs: expect.any(Number) });
  }, 60_000);
});
