// kill -9 during the start that makes a new table and closes the dead letters it reads into it
// (core/ingest DESIGN.md, "On open (recover)": `closeLetters`).
//
// Phase 1 (in this process): an Ingestor without a yard table takes yard/doors events (a few
// resent, some out of order, doors changing several times) among inventory/stock events and is
// closed cleanly: every yard delivery is an open no_binding letter. Phase 2: a child
// (new-table-letters-child.ts) opens the Ingestor WITH yard_doors and its binding — the open reads
// the journal into the new table, marks the letters replayed and commits the tables one after the
// other — and is SIGKILLed at a seeded random moment spread over the open's measured duration, or
// kills itself right after one of its table commits (a timed kill lands between two commits only
// now and then); some runs also replay what is still open, some are let finish. The tables are
// given in the site's order (yard_doors committed before dead_letters) or with dead_letters first,
// so a kill can leave either side of the argument: the rows without the closed letters, or the
// closed letters with yard_doors still uncommitted (position 0: the next start reads the journal
// into it again). Kills follow each other on the same directory until a child finishes, then a
// clean open in this process replays what is still open; several rounds, each from a copy of phase
// 1's directory.
//
// After each kill: (a) every letter is still there, open or replayed; no letter is replayed whose
// event yard_doors' committed progress says it holds while its row lacks it (the next start would
// not read it again: lost); every yard_doors row is the state of the event its yard_seq names;
// (d) the seed tables are as phase 1 left them. After the final clean open: (e) deadLetterCount()
// is the number of open letters; (c) every replayed letter's event is in yard_doors; then after
// `replayDeadLetters()` (b) yard_doors holds exactly each door's last state (its highest seq), every
// letter is replayed and none open, and the seed tables are unchanged.
// What it catches: the sequencer restored from dead_letters' high-water mark of yard/doors while
// yard_doors, which has none, should count 0 (`recover`, step 1) — after a kill between
// dead_letters' commit and yard_doors' the next start dropped every yard event as a duplicate and
// the closed letters pointed at an empty table.
// Reproduce: TILSTAND_SEED_NEW_TABLE_LETTERS=<seed> (printed, with each kill's delay).
import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog, valueToJson } from '../../core/lsm/index.ts';
import { ContractRegistry } from '../../core/ingest/contracts.ts';
import { Ingestor } from '../../core/ingest/ingestor.ts';
import { Journal } from '../../core/ingest/journal.ts';
import { readProgress, streamKey } from '../../core/ingest/progress.ts';
import { SEED_BINDINGS } from '../../core/ingest/seed-bindings.ts';
import { SEED_TABLES } from '../../core/ingest/seed-tables.ts';
import { mulberry32 as rng } from '../../core/lsm/testing/prng.ts';
import { LETTERS_SITE, YARD_BINDING, YARD_BUDGETS, YARD_TABLE, registerContracts } from './new-table-letters-tables.ts';

const YARD_EVENTS = 600;
const DOORS = 12;
const STOCK_EVENTS = 200;
/** Kills wanted; rounds go on until there are as many, within ROUNDS_MAX rounds and DEADLINE_MS (8 rounds once gave 5 kills in 13 s: the opens ran faster than the kills aimed at). */
const KILLS = 12;
const ROUNDS_MAX = 14;
/** Kills per round at most (a round ends earlier when a child finishes). */
const CHAIN_MAX = 4;
/** No child starts after this (one takes 1–2 s, most of it tsx's start, on a loaded 2-core machine). */
const DEADLINE_MS = 32_000;
const CHILD = join(import.meta.dirname, 'new-table-letters-child.ts');
const DB = `site_${LETTERS_SITE}`;
const SEED_TABLE_NAMES = SEED_TABLES.map((t) => t.name);

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const scratch = (what: string) => {
  const d = mkdtempSync(join(tmpdir(), `tilstand-new-table-letters-${what}-`));
  dirs.push(d);
  return d;
};

interface YardEvent {
  seq: number;
  door: string;
  state: string;
}

const yardPayload = (e: YardEvent) =>
  Buffer.from(
    JSON.stringify({
      op: 'u',
      before: null,
      after: { door_id: e.door, state: e.state },
      source: { module: 'yard', stream: 'doors', seq: e.seq },
      ts_ms: 1764489600000,
      contract: { name: 'yard.doors', version: 1 },
    }),
  );
const stockPayload = (seq: number, item: string, qty: number) =>
  Buffer.from(
    JSON.stringify({
      op: 'u',
      before: null,
      after: { item, location: 'L1', qty },
      source: { module: 'inventory', stream: 'stock', seq },
      ts_ms: 1764489600000,
      contract: { name: 'inventory.stock', version: 1 },
    }),
  );
const topic = (module: string, stream: string) => `tilstand/${LETTERS_SITE}/events/${module}/${stream}`;

function openIngestor(dataDir: string, journal: Journal, withYard: boolean): Ingestor {
  const contracts = new ContractRegistry(join(dataDir, 'contracts'));
  registerContracts(contracts);
  return Ingestor.open({
    site: LETTERS_SITE,
    catalog: new Catalog(join(dataDir, 'warehouse')),
    database: DB,
    journal,
    contracts,
    bindings: withYard ? [...SEED_BINDINGS, YARD_BINDING] : [...SEED_BINDINGS],
    tables: withYard ? [...SEED_TABLES, YARD_TABLE] : [...SEED_TABLES],
    budgets: withYard ? YARD_BUDGETS : [],
  });
}

/** A table's committed rows in JSON form (none when it does not exist or has no snapshot). */
function rowsOf(dataDir: string, name: string): Record<string, unknown>[] {
  const catalog = new Catalog(join(dataDir, 'warehouse'));
  if (!catalog.tableExists({ database: DB, table: name })) return [];
  const t = catalog.getTable({ database: DB, table: name });
  if (!t.latestSnapshot()) return [];
  return t.scanRows().map((r) => Object.fromEntries(t.schema.fields.map((f, i) => [f.name, valueToJson(f.type, r[i])])));
}

/** The seed tables' rows, one sorted JSON line each, to compare with phase 1's. */
function seedState(dataDir: string): Record<string, string[]> {
  return Object.fromEntries(SEED_TABLE_NAMES.map((n) => [n, rowsOf(dataDir, n).map((r) => JSON.stringify(r)).sort()]));
}

/** yard_doors' committed progress for yard/doors, or none when it has no snapshot. */
function yardProgress(dataDir: string): { position: bigint; hwm: number } | undefined {
  const catalog = new Catalog(join(dataDir, 'warehouse'));
  if (!catalog.tableExists({ database: DB, table: 'yard_doors' })) return undefined;
  const t = catalog.getTable({ database: DB, table: 'yard_doors' });
  if (!t.latestSnapshot()) return undefined;
  const p = readProgress(t.committedProperties(), 'yard_doors');
  return { position: p.position, hwm: p.hwm.get(streamKey('yard', 'doors')) ?? 0 };
}

interface ChildRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  lines: string[];
  stderr: string;
  openedMs?: number;
}

/**
 * Runs the child; `killAfterMs` counts from its `opening` line (undefined: never killed).
 * Bounded: a child that has not exited 20 s after it started is killed and the run fails.
 */
function runChild(dataDir: string, order: string, mode: string, killAfterMs: number | undefined, killAfterCommit?: number): Promise<ChildRun> {
  return new Promise((resolve) => {
    const args = [CHILD, dataDir, order, mode, ...(killAfterCommit === undefined ? [] : [String(killAfterCommit)])];
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    const run: ChildRun = { code: null, signal: null, lines: [], stderr: '' };
    let openingAt = 0;
    const guard = setTimeout(() => child.kill('SIGKILL'), 20_000);
    let killTimer: NodeJS.Timeout | undefined;
    child.stderr!.on('data', (d) => (run.stderr += String(d)));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      run.lines.push(line);
      if (line === 'opening') {
        openingAt = performance.now();
        if (killAfterMs !== undefined) killTimer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
      } else if (line.startsWith('opened ')) run.openedMs = performance.now() - openingAt;
    });
    child.on('exit', (code, signal) => {
      clearTimeout(guard);
      clearTimeout(killTimer);
      run.code = code;
      run.signal = signal;
      resolve(run);
    });
  });
}

describe('a new table closing the dead letters it reads from the journal, under kill -9', () => {
  it('never closes a letter whose event the table lacks for good, and loses none', async () => {
    const seed = Number(process.env.TILSTAND_SEED_NEW_TABLE_LETTERS ?? Math.floor(Math.random() * 2 ** 31));
    console.log(`new-table letters crash test: TILSTAND_SEED_NEW_TABLE_LETTERS=${seed}`);
    const rand = rng(seed);
    const started = Date.now();
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

    // --- Phase 1: yard events before the site has a table for them. ---
    const yard: YardEvent[] = [];
    for (let seq = 1; seq <= YARD_EVENTS; seq++) yard.push({ seq, door: `D-${String(1 + Math.floor(rand() * DOORS)).padStart(2, '0')}`, state: pick(['free', 'occupied', 'down']) });
    // Delivery order: mostly in order, a few swapped with a neighbour (the sequencer holds the
    // later one at the open's read), a few resent later (a second letter, a duplicate by seq).
    const deliveries: { topic: string; payload: Buffer; yard?: YardEvent }[] = [];
    const order = yard.slice();
    for (let k = 0; k + 1 < order.length; k++) if (rand() < 0.05) [order[k], order[k + 1]] = [order[k + 1]!, order[k]!];
    let stockSeq = 0;
    for (const e of order) {
      deliveries.push({ topic: topic('yard', 'doors'), payload: yardPayload(e), yard: e });
      if (rand() < 0.03) deliveries.push({ topic: topic('yard', 'doors'), payload: yardPayload(e), yard: e });
      if (stockSeq < STOCK_EVENTS && rand() < STOCK_EVENTS / YARD_EVENTS) deliveries.push({ topic: topic('inventory', 'stock'), payload: stockPayload(++stockSeq, `I-${Math.floor(rand() * 20)}`, Math.floor(rand() * 500)) });
    }
    const base = scratch('phase1');
    const letters = new Map<bigint, YardEvent>();
    {
      const journal = Journal.open(base);
      const ing = openIngestor(base, journal, false);
      for (let at = 0; at < deliveries.length; at += 50) {
        const chunk = deliveries.slice(at, at + 50);
        const positions = await Promise.all(chunk.map((d) => ing.accept(d.topic, d.payload)));
        chunk.forEach((d, k) => d.yard && letters.set(positions[k]!, d.yard));
      }
      ing.close();
      journal.close();
    }
    const N = letters.size;
    const expected = new Map<string, YardEvent>();
    for (const e of yard) if ((expected.get(e.door)?.seq ?? 0) < e.seq) expected.set(e.door, e);
    const seedBefore = seedState(base);
    {
      const dead = rowsOf(base, 'dead_letters');
      expect(dead.length).toBe(N);
      expect(dead.every((d) => d.status === 'open' && d.reason === 'no_binding')).toBe(true);
      expect(seedBefore.stock!.length).toBeGreaterThan(0);
    }

    // --- How long the open takes: on a copy, let finish. ---
    const cal = scratch('calibrate');
    cpSync(base, cal, { recursive: true });
    const calRun = await runChild(cal, 'yard-first', 'open', undefined);
    expect(calRun.code, calRun.stderr).toBe(0);
    let openMs = calRun.openedMs!;
    // Undisturbed, the open closes one letter per seq (a resent copy is a duplicate: its letter stays open).
    const opened = calRun.lines.find((l) => l.startsWith('opened '))!;
    expect(Number(opened.split(' ')[2]), 'letters closed at an undisturbed open').toBe(YARD_EVENTS);
    console.log(`new-table letters crash test: ${N} letters, the open takes ${openMs.toFixed(0)} ms as seen from here (${opened})`);

    // --- Phase 2: kills during and after the open, then a clean open. ---
    const states = new Map<string, number>();
    let kills = 0;
    let finished = 0;
    for (let round = 0; round < ROUNDS_MAX && kills < KILLS; round++) {
      if (Date.now() - started > DEADLINE_MS) break;
      const dir = scratch(`round${round}`);
      cpSync(base, dir, { recursive: true });
      // A chain cut short by the deadline goes on to the final checks: the clean open recovers whatever the kill left.
      for (let k = 0; k < CHAIN_MAX && Date.now() - started < DEADLINE_MS; k++) {
        let tableOrder = rand() < 0.5 ? 'yard-first' : 'letters-first';
        const mode = rand() < 0.3 ? 'replay' : 'open';
        // Some runs are let finish. Some kill themselves right after one of their table commits
        // (the open commits yard_doors and dead_letters, a replay both again): exactly
        // between two commits. The others are killed from here: a third spread over the whole
        // open and a bit after it, the rest over its second half, where the read is done and the
        // tables are committed one after the other (about the last 40 % of it).
        // The first run of rounds 0 and 1 is each side of the argument for sure, whatever the
        // draws: a kill right after the first commit, dead_letters' (letters closed, yard_doors
        // uncommitted) and yard_doors' (rows, letters open).
        const forced = k === 0 && round < 2;
        if (forced) tableOrder = round === 0 ? 'letters-first' : 'yard-first';
        const r = forced ? 0.1 : rand();
        const killAfterCommit = forced ? 1 : r >= 0.1 && r < 0.4 ? 1 + Math.floor(rand() * (mode === 'open' ? 2 : 4)) : undefined;
        const killAfterMs = r < 0.4 ? undefined : r < 0.6 ? rand() * openMs * 1.2 : openMs * (0.45 + rand() * 0.6);
        const run = await runChild(dir, tableOrder, mode, killAfterMs, killAfterCommit);
        const how = killAfterCommit !== undefined ? `kill after commit ${killAfterCommit}` : killAfterMs === undefined ? 'no kill' : `kill after ${killAfterMs.toFixed(1)} ms`;
        const what = `round ${round} run ${k} (${tableOrder}, ${mode}, ${how})`;
        // The open's duration drifts with the machine's load: follow it from the opens that did the whole work.
        const opened = run.lines.find((l) => l.startsWith('opened '));
        if (run.openedMs !== undefined && opened?.split(' ')[2] === String(YARD_EVENTS)) openMs = (openMs + run.openedMs) / 2;
        if (run.signal !== 'SIGKILL') {
          expect(run.code, `${what}: ${run.stderr}`).toBe(0);
          finished++;
          console.log(`new-table letters crash test: ${what}: finished (${run.lines.join(', ')})`);
          break;
        }
        kills++;
        const state = checkAfterKill(dir, what);
        states.set(state, (states.get(state) ?? 0) + 1);
        console.log(`new-table letters crash test: ${what}: killed (${run.lines.join(', ') || 'before opening'}) → ${state}`);
      }
      checkFinal(dir, `round ${round}`);
      await finalReplay(dir, `round ${round}`);
    }
    console.log(
      `new-table letters crash test: ${kills} kills, ${finished} finished, states after the kills: ${[...states].map(([s, n]) => `${s} ×${n}`).join('; ')}, ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    expect(kills).toBeGreaterThanOrEqual(6);
    // Both sides of DESIGN.md's argument were reached (the forced runs), so the final checks saw them.
    expect([...states.keys()]).toEqual(expect.arrayContaining(['yard_doors uncommitted, letters closed', 'yard_doors committed, letters open']));

    /** The invariants a kill must leave; returns which state it left (for the summary). */
    function checkAfterKill(dir: string, what: string): string {
      const dead = rowsOf(dir, 'dead_letters');
      // (a) every letter still there, open or replayed, and nothing else.
      expect(dead.length, `${what}: letters`).toBe(N);
      for (const d of dead) {
        expect(letters.has(BigInt(d.position as string | number)), `${what}: letter at ${d.position}`).toBe(true);
        expect(['open', 'replayed'], `${what}: letter at ${d.position}`).toContain(d.status);
      }
      const yardRows = new Map(rowsOf(dir, 'yard_doors').map((r) => [r.door_id as string, r]));
      // Every row is the state of the event its yard_seq names.
      for (const r of yardRows.values()) {
        const e = yard[Number(r.yard_seq) - 1]!;
        expect({ door: r.door_id, state: r.state }, `${what}: yard_doors row`).toEqual({ door: e.door, state: e.state });
      }
      // A replayed letter whose event yard_doors' progress covers must be there: the next start
      // does not read it into yard_doors again.
      const progress = yardProgress(dir);
      const replayed = dead.filter((d) => d.status === 'replayed');
      for (const d of replayed) {
        const position = BigInt(d.position as string | number);
        const e = letters.get(position)!;
        const covered = progress !== undefined && (position <= progress.position || e.seq <= progress.hwm);
        if (covered) expect(Number(yardRows.get(e.door)?.yard_seq ?? 0), `${what}: replayed letter at ${position} (${e.door} seq ${e.seq}) held by yard_doors' progress`).toBeGreaterThanOrEqual(e.seq);
      }
      // (d) the seed tables as phase 1 left them.
      expect(seedState(dir), `${what}: seed tables`).toEqual(seedBefore);
      const rows = progress === undefined ? 'yard_doors uncommitted' : 'yard_doors committed';
      // All closed = one per seq (a resent copy's letter stays open until a replay).
      const closed = replayed.length === 0 ? 'letters open' : replayed.length >= YARD_EVENTS ? 'letters closed' : 'letters partly closed';
      return `${rows}, ${closed}`;
    }

    /** (c), (d), (e) after a clean open that finishes what the kills left. */
    function checkFinal(dir: string, what: string): void {
      const journal = Journal.open(dir);
      const ing = openIngestor(dir, journal, true);
      try {
        const all = ing.listDeadLetters({ limit: N + 10 });
        expect(all.length, `${what}: letters`).toBe(N);
        const open = all.filter((d) => d.status === 'open');
        // (e) the count of open letters is the letters with status open.
        expect(ing.deadLetterCount(), `${what}: deadLetterCount`).toBe(open.length);
        expect(open.length + all.filter((d) => d.status === 'replayed').length).toBe(N);
        // (c) a replayed letter's event is in yard_doors (its door's row is at its seq or later).
        const yardRows = new Map(rowsOf(dir, 'yard_doors').map((r) => [r.door_id as string, r]));
        for (const d of all) {
          if (d.status !== 'replayed') continue;
          const e = letters.get(d.position)!;
          expect(Number(yardRows.get(e.door)?.yard_seq ?? 0), `${what}: replayed letter at ${d.position} (${e.door} seq ${e.seq})`).toBeGreaterThanOrEqual(e.seq);
        }
        expect(seedState(dir), `${what}: seed tables`).toEqual(seedBefore);
      } finally {
        ing.close();
        journal.close();
      }
    }

    /** (b) after replayDeadLetters() of what is still open: each door's last state, every letter replayed. */
    async function finalReplay(dir: string, what: string): Promise<void> {
      const journal = Journal.open(dir);
      const ing = openIngestor(dir, journal, true);
      try {
        const openBefore = ing.deadLetterCount();
        const r = await ing.replayDeadLetters();
        expect(r, `${what}: replay`).toMatchObject({ replayed: openBefore, failed: 0 });
        expect(ing.deadLetterCount()).toBe(0);
        const all = ing.listDeadLetters({ limit: N + 10 });
        expect(all.length).toBe(N);
        expect(all.every((d) => d.status === 'replayed'), `${what}: every letter replayed`).toBe(true);
        const rows = rowsOf(dir, 'yard_doors')
          .map((r) => [r.door_id, r.state, Number(r.yard_seq)])
          .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
        const want = [...expected.values()].map((e) => [e.door, e.state, e.seq]).sort((a, b) => String(a[0]).localeCompare(String(b[0])));
        expect(rows, `${what}: yard_doors`).toEqual(want);
        expect(seedState(dir), `${what}: seed tables`).toEqual(seedBefore);
      } finally {
        ing.close();
        journal.close();
      }
    }
  }, 90_000);
});
