// Shared pieces of the reliability suites: the mode (short in CI, long with TILSTAND_LONG=1),
// seeded PRNGs and seed printing, temporary directories, paimon-check, and the results summary
// (`test/reliability/results/summary.json` + `summary.md`).
//
// Summary: each suite writes `results/<mode>/<suite>.json` and then regenerates summary.json and
// summary.md from every suite file of that mode (written to a temporary file and renamed, so two
// suites finishing together never leave a torn summary; the last one to finish includes all).

import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mulberry32 } from '../../../core/lsm/testing/prng.ts';

export { mulberry32 };

export const LONG = process.env.TILSTAND_LONG === '1';
export const MODE = LONG ? 'long' : 'short';
export const IN_CI = process.env.CI === 'true' || process.env.CI === '1';
export const RESULTS_DIR = join(import.meta.dirname, '..', 'results');

/** `short` in CI, `long` under TILSTAND_LONG=1. */
export const pick = <T>(short: T, long: T): T => (LONG ? long : short);

/**
 * The seed of a suite: `TILSTAND_SEED_<SUITE>` (e.g. TILSTAND_SEED_CRASH=123), else TILSTAND_SEED,
 * else random. Always printed, with the line that reproduces the run.
 */
export function suiteSeed(suite: string): number {
  const env = process.env[`TILSTAND_SEED_${suite.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`] ?? process.env.TILSTAND_SEED;
  const seed = env !== undefined ? Number(env) >>> 0 : Math.floor(Math.random() * 2 ** 31);
  console.log(`[reliability ${suite}] seed ${seed} (reproduce: TILSTAND_SEED_${suite.toUpperCase().replace(/[^A-Z0-9]/g, '_')}=${seed}${LONG ? ' TILSTAND_LONG=1' : ''} npx vitest run test/reliability/${suite}${LONG ? ' --config test/reliability/vitest.long.config.ts' : ''})`);
  return seed;
}

/** A per-trial seed derived from the suite's PRNG (printed by the caller with the trial). */
export const trialSeed = (rand: () => number): number => Math.floor(rand() * 2 ** 31);

export const int = (rand: () => number, lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1));
export const choose = <T>(rand: () => number, a: readonly T[]): T => a[Math.floor(rand() * a.length)]!;

const dirs: string[] = [];
export function tempDir(tag: string): string {
  const d = mkdtempSync(join(tmpdir(), `tilstand-rel-${tag}-`));
  dirs.push(d);
  return d;
}
export function removeTempDirs(): void {
  if (process.env.TILSTAND_KEEP) {
    console.log(`[reliability] TILSTAND_KEEP: kept ${dirs.join(' ')}`);
    return;
  }
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function until<T>(what: string, f: () => T | Promise<T>, ok: (v: T) => boolean, timeoutMs = 30_000, everyMs = 50): Promise<T> {
  const end = Date.now() + timeoutMs;
  let last: T | undefined;
  while (Date.now() < end) {
    last = await f();
    if (ok(last)) return last;
    await sleep(everyMs);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last: ${JSON.stringify(last, (_k, v) => (typeof v === 'bigint' ? String(v) : v))?.slice(0, 1000)}`);
}

// ---------------------------------------------------------------------------------------------
// paimon-check (the independent Avro check of a table directory).

export { paimonCheck, paimonCheckAvailable } from '../../../core/lsm/testing/shared.ts';

// ---------------------------------------------------------------------------------------------
// Results summary.

export interface SuiteResult {
  suite: string;
  /** What the suite proves, one line. */
  proves: string;
  seed: number;
  trials: number;
  faultsInjected: number;
  inputsTried: number;
  /** Acknowledged things missing or duplicated, wrong rows returned: always 0 when passing. */
  lost: number;
  durationMs: number;
  details: Record<string, unknown>;
  passed: boolean;
}

export function writeSummary(r: SuiteResult): void {
  const dir = join(RESULTS_DIR, MODE);
  mkdirSync(dir, { recursive: true });
  const line = `[reliability ${r.suite}] ${r.passed ? 'PASSED' : 'FAILED'} seed=${r.seed} trials=${r.trials} faults=${r.faultsInjected} inputs=${r.inputsTried} lost=${r.lost} ${(r.durationMs / 1000).toFixed(1)} s ${JSON.stringify(r.details)}`;
  console.log(line);
  atomicWrite(join(dir, `${r.suite}.json`), `${JSON.stringify({ ...r, mode: MODE, finishedAt: new Date().toISOString() }, null, 2)}\n`);
  const all = readdirSync(dir)
    .filter((n) => n.endsWith('.json'))
    .map((n) => JSON.parse(readFileSync(join(dir, n), 'utf8')) as SuiteResult & { mode: string; finishedAt: string })
    .sort((a, b) => a.suite.localeCompare(b.suite));
  const totals = {
    suites: all.length,
    passed: all.filter((s) => s.passed).length,
    trials: all.reduce((n, s) => n + s.trials, 0),
    faultsInjected: all.reduce((n, s) => n + s.faultsInjected, 0),
    inputsTried: all.reduce((n, s) => n + s.inputsTried, 0),
    lost: all.reduce((n, s) => n + s.lost, 0),
  };
  const summary = { mode: MODE, generatedAt: new Date().toISOString(), totals, suites: all };
  const name = MODE === 'short' ? 'summary' : 'summary.long';
  atomicWrite(join(RESULTS_DIR, `${name}.json`), `${JSON.stringify(summary, null, 2)}\n`);
  const md = [
    `# Reliability results (${MODE} mode)`,
    '',
    `Generated ${summary.generatedAt}. Totals: ${totals.suites} suites (${totals.passed} passed), ${totals.trials} trials, ${totals.faultsInjected} faults injected, ${totals.inputsTried} inputs tried, **${totals.lost} lost**.`,
    '',
    '| suite | result | seed | trials | faults | inputs | lost | time | what it proves |',
    '|---|---|---|---|---|---|---|---|---|',
    ...all.map((s) => `| ${s.suite} | ${s.passed ? 'pass' : 'FAIL'} | ${s.seed} | ${s.trials} | ${s.faultsInjected} | ${s.inputsTried} | ${s.lost} | ${(s.durationMs / 1000).toFixed(0)} s | ${s.proves} |`),
    '',
    '## Details',
    '',
    ...all.map((s) => `- **${s.suite}**: \`${JSON.stringify(s.details)}\``),
    '',
  ].join('\n');
  atomicWrite(join(RESULTS_DIR, `${name}.md`), md);
}

function atomicWrite(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}
