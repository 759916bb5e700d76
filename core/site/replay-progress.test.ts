// A long `tilstand deadletters replay` says how far it has come: Ingestor.replayDeadLetters reports
// each slice's counts (onProgress), the control socket sends the last ones with its heartbeats,
// and the CLI prints them in its 10 s line.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog } from '../lsm/index.ts';
import { runCli } from '../lsm/testing/cli.ts';
import { ContractRegistry } from '../ingest/contracts.ts';
import { Ingestor, type ReplayProgress } from '../ingest/ingestor.ts';
import { Journal } from '../ingest/journal.ts';
import { SEED_BINDINGS } from '../ingest/seed-bindings.ts';
import { INVENTORY_STOCK, SEED_CONTRACTS } from '../ingest/seed-contracts.ts';
import { SEED_TABLES } from '../ingest/seed-tables.ts';
import { progressText, runDeadLetters } from './cli/site-commands.ts';
import { ControlServer, controlRequest, type ControlHandler } from './control.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';

let dir: string;
const closers: (() => unknown)[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-replay-progress-'));
});
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
  rmSync(dir, { recursive: true, force: true });
});

const TOPIC = 'tilstand/s1/events/inventory/stock';
const v2Event = (seq: number, k: number) =>
  Buffer.from(JSON.stringify({ op: 'u', before: null, after: { item: `I-${k}`, location: 'L1', qty: k, note: null }, source: { module: 'inventory', stream: 'stock', seq }, ts_ms: 0, contract: { name: 'inventory.stock', version: 2 } }));
const V2 = { ...INVENTORY_STOCK, version: 2, fields: [...INVENTORY_STOCK.fields, { name: 'note', type: 'STRING' as const, default: null }] };

function openIngestor(): { ingestor: Ingestor; contracts: ContractRegistry } {
  const journal = Journal.open(dir);
  const contracts = new ContractRegistry(join(dir, 'contracts'));
  for (const c of SEED_CONTRACTS) contracts.register(c);
  const ingestor = Ingestor.open({ site: 's1', catalog: new Catalog(join(dir, 'warehouse')), database: 'site_s1', journal, contracts, bindings: [...SEED_BINDINGS], tables: [...SEED_TABLES], budgets: [] });
  closers.push(() => journal.close(), () => ingestor.abandon());
  return { ingestor, contracts };
}

describe('Ingestor.replayDeadLetters reports its progress once per slice', () => {
  it('every open letter: done of total after each slice, the failed ones counted, the last one whole', async () => {
    const { ingestor: i, contracts } = openIngestor();
    const bad = new Set([3, 13, 23]);
    let seq = 0;
    for (let k = 0; k < 28; k++) await i.accept(TOPIC, bad.has(k) ? Buffer.from(`{bad ${k}`) : v2Event(++seq, k));
    i.commitAll();
    expect(i.deadLetterCount()).toBe(28);
    contracts.register(V2);
    const seen: ReplayProgress[] = [];
    expect(await i.replayDeadLetters(undefined, { slice: 10, onProgress: (p) => seen.push({ ...p }) })).toEqual({ replayed: 25, failed: 3, notOpen: [], alike: 0 });
    expect(seen).toEqual([
      { done: 10, total: 28, replayed: 9, failed: 1 },
      { done: 20, total: 28, replayed: 18, failed: 2 },
      { done: 28, total: 28, replayed: 25, failed: 3 },
    ]);
  });

  it('counts letters that come while it replays into the total (they are replayed too)', async () => {
    const { ingestor: i } = openIngestor();
    for (let k = 0; k < 20; k++) await i.accept(TOPIC, Buffer.from(`{junk ${k}`));
    i.commitAll();
    const seen: ReplayProgress[] = [];
    const late: Promise<bigint>[] = [];
    const r = await i.replayDeadLetters(undefined, {
      slice: 10,
      onProgress: (p) => {
        seen.push({ ...p });
        // Five more letters arrive after the first slice: the journal's group commit (queued now)
        // runs in the turn of the event loop before the second slice.
        if (seen.length === 1) for (let k = 0; k < 5; k++) late.push(i.accept(TOPIC, Buffer.from(`{late ${k}`)));
      },
    });
    await Promise.all(late);
    expect(r).toEqual({ replayed: 0, failed: 25, notOpen: [], alike: 0 });
    expect(seen).toEqual([
      { done: 10, total: 20, replayed: 0, failed: 10 },
      { done: 20, total: 25, replayed: 0, failed: 20 },
      { done: 25, total: 25, replayed: 0, failed: 25 },
    ]);
  });

  it('named letters with the alike: done of the named and alike positions, slice by slice', async () => {
    const { ingestor: i, contracts } = openIngestor();
    const missing: bigint[] = [];
    for (let k = 1; k <= 6; k++) missing.push(await i.accept(TOPIC, v2Event(k, k)));
    i.commitAll();
    contracts.register(V2);
    const seen: ReplayProgress[] = [];
    const r = await i.replayDeadLetters([missing[3]!, 999_999n], { alike: true, slice: 4, onProgress: (p) => seen.push({ ...p }) });
    expect(r).toEqual({ replayed: 6, failed: 0, notOpen: ['999999'], alike: 5 });
    // 7 positions: the two named (one no letter) and the five alike.
    expect(seen).toEqual([
      { done: 4, total: 7, replayed: 3, failed: 0 },
      { done: 7, total: 7, replayed: 6, failed: 0 },
    ]);
  });

  it('refuses an onProgress that is no function, naming it', async () => {
    const { ingestor: i } = openIngestor();
    await expect(i.replayDeadLetters(undefined, { onProgress: 5 as unknown as () => void })).rejects.toThrow('replayDeadLetters: onProgress: expected a function, got number');
  });
});

describe('control socket heartbeats carry the progress a handler reports', () => {
  it('sends no progress until the handler reports some, then its last report with every beat', async () => {
    let report: ((p: Record<string, unknown>) => void) | undefined;
    let finish: (() => void) | undefined;
    const handlers = new Map<string, ControlHandler>([
      [
        'work',
        (_a, work) =>
          new Promise<string>((resolve) => {
            report = (p) => work.progress(p);
            finish = () => resolve('done');
          }),
      ],
    ]);
    const path = join(dir, 'c.sock');
    const server = await ControlServer.listen(path, handlers);
    closers.push(() => server.close());
    const beats: { ms: number; progress: Record<string, unknown> | undefined }[] = [];
    const answer = controlRequest(path, 'work', {}, 5_000, { heartbeatMs: 100, onWorking: (ms, progress) => beats.push({ ms, progress }) });
    const waitBeats = async (n: number) => {
      for (let k = 0; k < 100 && beats.length < n; k++) await new Promise((r) => setTimeout(r, 20));
      expect(beats.length).toBeGreaterThanOrEqual(n);
    };
    await waitBeats(2);
    expect(beats.every((b) => b.progress === undefined)).toBe(true);
    report!({ done: 1, total: 3 });
    report!({ done: 2, total: 3 });
    const before = beats.length;
    await waitBeats(before + 2);
    expect(beats.slice(before).map((b) => b.progress)).toEqual([{ done: 2, total: 3 }, { done: 2, total: 3 }]);
    finish!();
    expect(await answer).toBe('done');
  });
});

describe('tilstand deadletters replay prints the counts in its 10 s line', () => {
  it("says how many letters of how many, and how many still fail; nothing more from a site that sends no counts", async () => {
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ format: 1, site: 's1' }));
    const held: Socket[] = [];
    // A site that works on the replay for 20 s (its heartbeats say so at once): one with counts, one without.
    const lines = [
      { id: 1, working: true, elapsedMs: 10_000, progress: { done: 20_000, total: 200_000, replayed: 19_988, failed: 12 } },
      { id: 1, working: true, elapsedMs: 20_000 },
      { id: 1, ok: true, value: { replayed: 199_988, failed: 12 } },
    ];
    const fake = createServer((c) => {
      held.push(c);
      c.once('data', () => c.end(lines.map((l) => `${JSON.stringify(l)}\n`).join('')));
    });
    await new Promise<void>((r) => fake.listen(join(dir, 'control.sock'), r));
    closers.push(() => {
      for (const c of held) c.destroy();
      return new Promise((r) => fake.close(r));
    });
    const run = await runCli(runDeadLetters, ['replay', '--data', dir]);
    expect(run.err.split('\n').filter((l) => l.includes('still replaying'))).toEqual([
      'tilstand: the site is still replaying dead letters (10 s; 20000 of 200000 letters, 12 still failing)…',
      'tilstand: the site is still replaying dead letters (20 s)…',
    ]);
    expect(run.out).toBe('replayed 199988, still failing 12\n');
    expect(run.code).not.toBe(0); // letters still fail
  });

  it('reads counts only as whole numbers (an older or odd site sends something else)', () => {
    expect(progressText({ done: 5, total: 9, failed: 0 })).toBe('; 5 of 9 letters');
    expect(progressText({ done: 5, total: 9, failed: 2 })).toBe('; 5 of 9 letters, 2 still failing');
    expect(progressText(undefined)).toBe('');
    expect(progressText({ done: '5', total: 9 })).toBe('');
    expect(progressText({ done: 1.5, total: 9 })).toBe('');
    expect(progressText({ done: 5 })).toBe('');
  });
});

describe('a running site sends the replay counts to `deadletters.replay` with its heartbeats', () => {
  it('gone through slice by slice: done grows, total is every open letter', async () => {
    const data = join(dir, 'site');
    await initDataDir({ data, site: 'rp' });
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    closers.push(() => site.stop());
    // Three slices of 10,000 (the event loop turns before the third: the timers, heartbeats among them, run there).
    const n = 25_000;
    const t0 = Date.now();
    const accepted: Promise<bigint>[] = [];
    for (let k = 0; k < n; k++) accepted.push(site.ingestor.accept('tilstand/rp/events/inventory/stock', Buffer.from(`{junk ${k}`)));
    await Promise.all(accepted);
    site.ingestor.commitAll();
    expect(site.ingestor.deadLetterCount()).toBe(n);
    const beats: Record<string, unknown>[] = [];
    const r = (await controlRequest(join(data, 'control.sock'), 'deadletters.replay', {}, 30_000, { heartbeatMs: 100, onWorking: (_ms, p) => p && beats.push(p) })) as { replayed: number; failed: number };
    expect(r).toMatchObject({ replayed: 0, failed: n });
    expect(beats.length, `heartbeats with counts (letters made and replayed in ${Date.now() - t0} ms)`).toBeGreaterThan(0);
    for (const b of beats) {
      expect(b.total).toBe(n);
      expect([10_000, 20_000]).toContain(b.done);
      expect(b).toMatchObject({ replayed: 0, failed: b.done });
    }
  }, 120_000);
});
