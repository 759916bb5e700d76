// Smoke test of the benchmark harness (NOT a timed test: nothing here asserts a speed). Proves the
// workload generator is deterministic and shaped as specified, and that the harness runs every
// figure end to end in micro mode (a few thousand events) and produces a complete results table.
//
// Run: npx vitest run --config bench/vitest.config.ts
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FIGURES, runBench, SCALES } from './harness.ts';
import { medianRun } from './util.ts';
import { generateEvents, keyOf, packWorkload, deserializeWorkload, serializeWorkload, payloadAt } from './workload.ts';
import { DEFAULT_TABLE_CACHE_BYTES, DEFAULT_WRITE_BUFFER_BYTES } from '../core/site/config.ts';
import { SITE_LAUNCH, SITE_V8_FLAGS } from '../core/site/v8-flags.ts';

const ROOT = resolve(import.meta.dirname, '..');
const out = mkdtempSync(join(tmpdir(), 'tilstand-bench-test-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

describe('medianRun', () => {
  it('picks the run with the median value, the lower middle one of an even count', () => {
    const runs = [{ id: 'a', mb: 249 }, { id: 'b', mb: 226 }, { id: 'c', mb: 235 }];
    expect(medianRun(runs, (r) => r.mb).id).toBe('c');
    expect(medianRun([runs[0]!, runs[1]!], (r) => r.mb).id).toBe('b');
    expect(medianRun([runs[0]!], (r) => r.mb).id).toBe('a');
    expect(() => medianRun([], () => 0)).toThrow(/no runs/);
  });
});

describe('workload', () => {
  it('is deterministic, skewed 80/20, and carries one sequence per stream', () => {
    const spec = { seed: 42, keys: 1000, events: 5000 };
    const a = [...generateEvents(spec)];
    const b = [...generateEvents(spec)];
    expect(a.map((e) => e.payload)).toEqual(b.map((e) => e.payload));
    const hits = new Map<number, number>();
    for (const e of a) hits.set(e.key, (hits.get(e.key) ?? 0) + 1);
    const sorted = [...hits.values()].sort((x, y) => y - x);
    const top20 = sorted.slice(0, 200).reduce((s, x) => s + x, 0);
    expect(top20 / a.length).toBeGreaterThan(0.7);
    for (const m of [0, 1, 2]) {
      const seqs = a.filter((e) => e.m === m).map((e) => e.seq);
      expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    }
    const ev = JSON.parse(a[0]!.payload);
    expect(ev.after.item).toBe(keyOf(a[0]!.key).item);
    expect(ev.source.seq).toBe(1);
  });

  it('round-trips through its packed file form', () => {
    const spec = { seed: 7, keys: 100, events: 300 };
    const w = packWorkload(spec);
    const back = deserializeWorkload(spec, Buffer.concat(serializeWorkload(w)));
    const events = [...generateEvents(spec)];
    expect(back.count).toBe(300);
    for (let i = 0; i < 300; i += 37) expect(payloadAt(back, i).toString('utf8')).toBe(events[i]!.payload);
  });

  it('initialLoad visits every key once first', () => {
    const keys = new Set([...generateEvents({ seed: 1, keys: 500, events: 500, initialLoad: true })].map((e) => e.key));
    expect(keys.size).toBe(500);
  });
});

describe('harness (micro mode)', () => {
  it('runs every figure and writes a complete results table', async () => {
    const lines: string[] = [];
    const started = Date.now() - 1000;
    const { rows, json, markdown } = await runBench({ scale: SCALES.micro, outDir: out, noLatest: true, log: (l) => lines.push(l) });
    const figures = rows.map((r) => r.figure).join('\n');
    for (const f of ['Ingest, in process', 'SQLite @1,000', 'SQLite @10,000', 'JSON.parse', 'bytes written per event', 'Point lookups', 'Full scan', 'Flush', 'compaction', 'Tag creation', 'Time travel', 'MQTT end to end', 'PUBACK', 'Memory']) {
      expect(figures).toContain(f);
    }
    // The figures of issue #9 added later (no speeds asserted: only that they are there and well-formed).
    for (const f of ['MQTT external broker', 'Publish → visible', 'Dead-letter flood', 'Sync: bytes sent for a new tag', 'Replay:', 'Agent run over']) {
      expect(figures).toContain(f);
    }
    for (const r of rows) {
      expect(['PASS', 'FAIL', 'info']).toContain(r.status);
      for (const c of [r.figure, r.tilstand, r.sqlite, r.ratio, r.target, r.notes]) expect(typeof c === 'string' && c.length > 0).toBe(true);
    }
    // Target rows state their target; the PUBACK row became one.
    const puback = rows.find((r) => r.figure.includes('PUBACK (journaled) at 2,000'))!;
    expect(puback.target).toBe('p99 ≤ 10 ms');
    expect(['PASS', 'FAIL']).toContain(puback.status);
    // mosquitto: either measured (both rows) or one row saying why not — never a made-up figure.
    const ext = rows.filter((r) => r.figure.startsWith('MQTT external broker'));
    if (json.raw.mqttExternal.available) {
      expect(ext).toHaveLength(2);
      expect(json.raw.mqttExternal.median.eventsPerSec).toBeGreaterThan(0);
    } else {
      expect(ext).toHaveLength(1);
      expect(ext[0]!.status).toBe('info');
      expect(ext[0]!.tilstand).toMatch(/not installed/);
    }
    expect(['PASS', 'FAIL']).toContain(rows.find((r) => r.figure.startsWith('Publish → visible'))!.status);
    expect(json.raw.visible.samples).toBeGreaterThan(0);
    // The flood: every event a dead letter, the probe's PUBACKs timed.
    expect(json.raw.flood.deadLettersOpen).toBe(SCALES.micro.floodEvents);
    expect(json.raw.flood.probes).toBeGreaterThan(0);
    expect(json.raw.flood.probeWaitMs.max).toBeGreaterThan(0);
    expect(['PASS', 'FAIL']).toContain(rows.find((r) => r.figure.startsWith('Sync:'))!.status);
    expect(json.raw.sync.second.changedRows).toBe(Math.round(SCALES.micro.syncRows / 100));
    expect(json.raw.replay.result.events).toBeGreaterThan(0);
    expect(json.raw.agent.jobs).toBe(SCALES.micro.agentJobs);
    expect(json.raw.agent.deadLetters).toBe(0);
    // The checks between runs found each commit's table and re-checked the proposals citing its rows.
    const rep0 = json.raw.agent.reps[0];
    expect(rep0.jobsCheck.changed).toEqual(['work_queue']);
    expect(rep0.jobsCheck.checked).toBeGreaterThan(0);
    expect(rep0.stockCheck.changed).toEqual(['stock']);
    expect(rep0.stockCheck.checked).toBeGreaterThan(0);
    expect(rows.find((r) => r.figure.startsWith('Agent check between runs'))!.tilstand).toMatch(/ms \([\d,]+ jobs\) \/ [\d.]+ ms \([\d,]+ stock rows\)/);
    // Memory is measured with the site's own settings (core/site config.ts) and V8 flags
    // (core/site/v8-flags.ts), judged only at 1 M rows.
    // It is launched as a site is launched (SITE_LAUNCH's node flags and environment: nothing missing
    // in the child), and a second child without them shows what they change.
    const launch = { nodeFlags: [...SITE_LAUNCH.nodeFlags], env: { ...SITE_LAUNCH.env } };
    expect(json.raw.memory.held.settings).toEqual({ tableCacheBytes: DEFAULT_TABLE_CACHE_BYTES, writeBufferBytes: DEFAULT_WRITE_BUFFER_BYTES, v8Flags: [...SITE_V8_FLAGS], launch: { ...launch, missing: [] } });
    expect(json.raw.memory.unlaunched.settings.launch.missing).toEqual([...SITE_LAUNCH.nodeFlags, ...Object.entries(SITE_LAUNCH.env).map(([k, v]) => `${k}=${v}`)]);
    expect(rows.find((r) => r.figure.startsWith("Memory: the same child started without the site's launch settings"))!.status).toBe('info');
    const mem = rows.find((r) => r.figure.startsWith('Memory: peak RSS of a site process'))!;
    expect(mem.status).toBe('info');
    expect(mem.target).toMatch(/judged at 1 M rows/);
    // Its child starts as a site starts: from the bundle, built by the harness, with plain node.
    expect(mem.notes).toContain('child runs from its bundle with plain node');
    expect(statSync(join(ROOT, 'dist', 'bench', 'child.mjs')).mtimeMs).toBeGreaterThanOrEqual(started);
    // The two engines end in the same state.
    expect(json.raw.reads.mismatches).toBe(0);
    expect(json.raw.ingest[0].tilstand.events).toBe(SCALES.micro.events);
    expect(json.raw.mqtt.median.journalMsgPerSec).toBeGreaterThan(0);
    // Where the broker thread's time went: CPU shares of both brokers, commit share of the journaled one.
    for (const k of ['bareCpuShare', 'journalCpuShare', 'commitShare']) expect(json.raw.mqtt.median[k], k).toBeGreaterThan(0);
    expect(rows.find((r) => r.figure.startsWith('MQTT end to end'))!.notes).toMatch(/journaled \d+ % CPU, \d+ % of the time in group commits/);
    expect(markdown).toMatch(/^\| figure \| Tilstand \| SQLite \| ratio \| target \| result \| notes \|$/m);
    expect(readdirSync(out).filter((f) => f.endsWith('-micro.json'))).toHaveLength(1);
    expect(readdirSync(out)).not.toContain('latest.json');
    for (const f of FIGURES) expect(json.meta.phaseSeconds[f]).toBeGreaterThan(0);
  }, 900_000);
});
