// kill -9 at random moments: no acknowledged event is lost and none is applied twice.
//
// A child process (ingestor-crash-child.ts, `node --import tsx`) runs an Ingestor on a temporary
// data directory and acknowledges events it reads from stdin once they are durable. The parent
// streams a known sequence (three stock modules, sequence groups, random resends, chunks sent out
// of order so events wait in the reorder buffer, a few bad payloads), kill -9s the child at seeded random moments (≥ 12 kills), restarts it, resends what
// was not acknowledged (as a module's outbox would), and at the end checks the tables against a
// model: stock equals the fold of the events per column group, the ledger holds every event exactly
// once, the APPEND snapshots of the ledger add up to exactly one row per event (an event applied
// twice would add a second record), and dead_letters holds one row per journaled bad payload.
// Reproduce a run with INGEST_CRASH_SEED=<seed> (printed).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog, valueToJson } from '../../core/lsm/index.ts';
import { Journal } from '../../core/ingest/journal.ts';
import { mulberry32 as rng } from '../../core/lsm/testing/prng.ts';

const KILLS = 12;
const PER_STREAM = 150;
const DEADLINE_MS = 120_000;
const CHILD = join(import.meta.dirname, 'ingestor-crash-child.ts');

interface Ev {
  topic: string;
  payload: string;
  module: string;
  stream: string;
  seq: number;
  key: string;
  qty: number;
}

const STREAMS = [
  { module: 'inventory', stream: 'stock', contract: 'inventory.stock', field: 'qty', column: 'on_hand' },
  { module: 'commerce', stream: 'reservations', contract: 'commerce.reservations', field: 'reserved_qty', column: 'reserved' },
  { module: 'procurement', stream: 'inbound', contract: 'procurement.inbound', field: 'inbound_qty', column: 'inbound' },
] as const;

let dir: string | undefined;
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Run {
  child: ChildProcess;
  ready: Promise<number>;
  exited: Promise<number | null>;
}

function startChild(dataDir: string, onAck: (i: number) => void): Run {
  const child = spawn(process.execPath, ['--import', 'tsx', CHILD, dataDir], { stdio: ['pipe', 'pipe', 'pipe'] });
  child.stdin!.on('error', () => undefined); // EPIPE after a kill
  let stderr = '';
  child.stderr!.on('data', (d) => { stderr += String(d); if (process.env.INGEST_CRASH_VERBOSE) process.stdout.write(String(d)); });
  let readyResolve!: (n: number) => void;
  let readyReject!: (e: Error) => void;
  const ready = new Promise<number>((res, rej) => ((readyResolve = res), (readyReject = rej)));
  createInterface({ input: child.stdout! }).on('line', (line) => {
    if (line.startsWith('ack ')) onAck(Number(line.slice(4)));
    else if (line.startsWith('ready ')) readyResolve(Number(line.slice(6)));
  });
  const exited = new Promise<number | null>((res) =>
    child.on('exit', (code) => {
      readyReject(new Error(`child exited (${code}) before ready: ${stderr}`));
      res(code);
    }),
  );
  ready.catch(() => undefined);
  return { child, ready, exited };
}

describe('Ingestor under kill -9', () => {
  it('keeps every acknowledged event exactly once across random kills', async () => {
    const seed = Number(process.env.INGEST_CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));
    console.log(`ingestor crash test: INGEST_CRASH_SEED=${seed}`);
    const rand = rng(seed);
    const started = Date.now();
    dir = mkdtempSync(join(tmpdir(), 'tilstand-ingest-crash-'));

    // The model: each stream's events in seq order, interleaved at random; some bad payloads.
    const events: Ev[] = [];
    const next = STREAMS.map(() => 1);
    const badPayloads = new Set<string>();
    while (next.some((n) => n <= PER_STREAM)) {
      const k = Math.floor(rand() * STREAMS.length);
      if (next[k]! > PER_STREAM) continue;
      const s = STREAMS[k]!;
      const seq = next[k]!++;
      const item = `I-${Math.floor(rand() * 6)}`;
      const location = rand() < 0.5 ? 'L1' : 'L2';
      const qty = Math.floor(rand() * 1000);
      const payload = JSON.stringify({
        op: 'u',
        before: null,
        after: { item, location, [s.field]: qty },
        source: { module: s.module, stream: s.stream, seq },
        ts_ms: 1764489600000,
        contract: { name: s.contract, version: 1 },
      });
      events.push({ topic: `tilstand/s1/events/${s.module}/${s.stream}`, payload, module: s.module, stream: s.stream, seq, key: `${item}|${location}`, qty });
      if (rand() < 0.02) {
        const bad = `not json ${events.length}`;
        badPayloads.add(bad);
        events.push({ topic: 'tilstand/s1/events/inventory/stock', payload: bad, module: 'inventory', stream: 'stock', seq: -1, key: '', qty: 0 });
      }
    }

    const acked = new Set<number>();
    let kills = 0;
    let runs = 0;
    let recoveredTotal = 0;
    for (;;) {
      expect(Date.now() - started, 'time bound').toBeLessThan(DEADLINE_MS);
      runs++;
      const run = startChild(dir, (i) => acked.add(i));
      recoveredTotal += await run.ready;
      const final = kills >= KILLS;
      // Resend everything not acknowledged, in order, plus random resends of acknowledged ones.
      const todo = events.map((_, i) => i).filter((i) => !acked.has(i));
      const killAfterMs = final ? Infinity : 20 + rand() * 250;
      const t0 = Date.now();
      let killed = false;
      const deferred: { i: number; due: number }[] = [];
      for (let at = 0, n = 0; at < todo.length || deferred.length > 0; at += 8, n++) {
        if (Date.now() - t0 >= killAfterMs) break;
        const chunk = todo.slice(at, at + 8);
        // Hold one event back for a few chunks: a gap that stays open across ticks and commits,
        // while other streams' events are applied and committed past it.
        if (chunk.length > 1 && rand() < 0.25) deferred.push({ i: chunk.shift()!, due: n + 2 + Math.floor(rand() * 10) });
        for (let d = deferred.length - 1; d >= 0; d--) {
          if (deferred[d]!.due <= n || at + 8 >= todo.length) chunk.push(deferred.splice(d, 1)[0]!.i);
        }
        if (acked.size > 0 && rand() < 0.3) {
          const again = [...acked][Math.floor(rand() * acked.size)]!;
          chunk.push(again);
        }
        if (rand() < 0.5) {
          // Out of order within the chunk: later seqs arrive first and wait in the reorder buffer.
          for (let a = chunk.length - 1; a > 0; a--) {
            const b = Math.floor(rand() * (a + 1));
            [chunk[a], chunk[b]] = [chunk[b]!, chunk[a]!];
          }
        }
        run.child.stdin!.write(chunk.map((i) => `${i}\t${events[i]!.topic}\t${events[i]!.payload}\n`).join(''));
        await new Promise((r) => setTimeout(r, 2 + rand() * 12));
      }
      if (!final) {
        const wait = killAfterMs - (Date.now() - t0);
        if (wait > 0) await new Promise((r) => setTimeout(r, wait));
        run.child.kill('SIGKILL');
        killed = true;
        await run.exited;
        kills++;
        continue;
      }
      // Final run: wait until everything is acknowledged, then close cleanly.
      const until = Date.now() + 30_000;
      while (acked.size < events.length && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect(acked.size).toBe(events.length);
      run.child.stdin!.write('close\n');
      expect(await run.exited).toBe(0);
      expect(killed).toBe(false);
      break;
    }
    console.log(`ingestor crash test: ${runs} runs, ${kills} kills, ${recoveredTotal} journal entries replayed at starts, ${((Date.now() - started) / 1000).toFixed(1)} s`);
    expect(kills).toBeGreaterThanOrEqual(10);

    // --- Check the tables against the model. ---
    const catalog = new Catalog(join(dir, 'warehouse'));
    const read = (name: string) => {
      const t = catalog.getTable({ database: 'site_s1', table: name });
      return { t, rows: t.scanRows().map((r) => Object.fromEntries(t.schema.fields.map((f, i) => [f.name, valueToJson(f.type, r[i])]))) };
    };
    const good = events.filter((e) => e.seq > 0);

    // Ledger: exactly one row per event, and exactly one record per event across all APPEND snapshots.
    const ledger = read('ledger');
    expect(ledger.rows.length).toBe(good.length);
    const byId = new Map(ledger.rows.map((r) => [`${r.module}/${r.stream}/${r.seq}`, r.qty]));
    for (const e of good) expect(byId.get(`${e.module}/${e.stream}/${e.seq}`), `${e.module}/${e.stream} seq ${e.seq}`).toBe(e.qty);
    let appended = 0;
    for (const id of ledger.t.snapshots.listIds()) {
      const s = ledger.t.snapshots.get(id);
      if (s.commitKind === 'APPEND') appended += s.deltaRecordCount ?? 0;
    }
    expect(ledger.t.snapshots.earliestId()).toBe(1); // nothing expired: the sum covers every commit
    expect(appended, 'records committed to the ledger (an event applied twice adds one)').toBe(good.length);

    // Stock: each column group equals the fold (the highest seq per key wins) of its own stream.
    const model = new Map<string, Record<string, unknown>>();
    for (const e of good) {
      const s = STREAMS.find((x) => x.module === e.module)!;
      const [item, location] = e.key.split('|');
      const r = model.get(e.key) ?? { item, location, on_hand: null, inventory_seq: null, reserved: null, commerce_seq: null, inbound: null, procurement_seq: null };
      r[s.column] = e.qty;
      r[`${s.module}_seq`] = e.seq;
      model.set(e.key, r);
    }
    const stock = read('stock');
    expect(stock.rows.length).toBe(model.size);
    for (const r of stock.rows) expect(r).toEqual(model.get(`${r.item}|${r.location}`));

    // Dead letters: one per journaled bad delivery (a resend is a new event with its own position).
    const journal = Journal.open(dir);
    let badJournaled = 0;
    try {
      for (const e of journal.readAfter(0n)) if (badPayloads.has(e.payload.toString())) badJournaled++;
    } finally {
      journal.close();
    }
    const dead = read('dead_letters');
    expect(dead.rows.length).toBe(badJournaled);
    expect(dead.rows.every((r) => r.reason === 'bad_json' && r.status === 'open')).toBe(true);
  }, 150_000);
});
