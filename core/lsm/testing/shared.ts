// What tests take from ../shared, beside the checkout: the tables Java Paimon wrote
// (fixtures/paimon, see their PROVENANCE.md) and paimon-check, the independent check of a table
// directory with Apache's own Avro library (python3-avro, python3-zstandard). Where either is
// missing the tests that need it skip with a loud notice; under CI=true its absence is a failure.

import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

// CI=1 as well: the reliability suites' paimon-check, which this replaced, counted it as CI.
const IN_CI = process.env.CI === 'true' || process.env.CI === '1';

/** ../shared, beside the checkout. */
const SHARED_DIR = resolve(import.meta.dirname, '..', '..', '..', '..', 'shared');
export const PAIMON_FIXTURES = join(SHARED_DIR, 'fixtures', 'paimon');
const PAIMON_CHECK = join(SHARED_DIR, 'tools', 'paimon-check');

/** True when `why` is unset; else a notice that `what` is skipped, or under CI=true an error. */
function availableOrSkip(why: string | undefined, what: string): boolean {
  if (why === undefined) return true;
  if (IN_CI) throw new Error(`${why}: under CI=true ${what} may not be skipped`);
  console.warn(`\n*** NOTICE: ${why}: SKIPPING ${what} ***\n`);
  return false;
}

/** Whether the Java-written fixtures are there; says which tests skip when they are not. */
export function paimonFixturesAvailable(what: string): boolean {
  return availableOrSkip(existsSync(PAIMON_FIXTURES) ? undefined : `${PAIMON_FIXTURES} is absent`, what);
}

let checkMissing: string | undefined | null = null;

/** Whether paimon-check can run here (the script, and python3-avro and python3-zstandard for its interpreter). */
export function paimonCheckAvailable(what = 'the independent table check (paimon-check)'): boolean {
  if (checkMissing === null) {
    if (!existsSync(PAIMON_CHECK)) checkMissing = `${PAIMON_CHECK} is absent`;
    else {
      // The interpreter of its shebang (/usr/bin/python3), which may differ from PATH's python3.
      const python = /^#!\s*(\S+)/.exec(readFileSync(PAIMON_CHECK, 'utf8'))?.[1] ?? 'python3';
      const r = spawnSync(python, ['-c', 'import avro, zstandard'], { encoding: 'utf8' });
      checkMissing = r.status === 0 ? undefined : `${python} lacks python3-avro or python3-zstandard (Debian packages)`;
    }
  }
  return availableOrSkip(checkMissing, what);
}

export interface PaimonCheckResult {
  /** Problems it reported; -1 when it printed no verdict (it crashed). */
  problems: number;
  output: string;
  status: number | null;
}

/** Runs paimon-check on a table directory. */
export function paimonCheck(tableDir: string): PaimonCheckResult {
  const r = spawnSync(PAIMON_CHECK, [tableDir], { encoding: 'utf8' });
  const output = `${r.stdout ?? ''}${r.stderr ?? ''}`;
  const m = /paimon-check: (\d+) problems/.exec(output);
  return { problems: m ? Number(m[1]) : -1, output, status: r.status };
}
