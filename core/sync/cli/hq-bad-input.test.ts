// `tilstand hq …` given values it cannot use: each is refused naming the option and what was
// expected (exit 2), or, for a site HQ has nothing of, "not found" (exit 1) — not a run that
// reads or writes something else than was meant and exits 0.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lsm/testing/cli.ts';
import { runHq } from './hq.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-hq-bad-input-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const hqDir = join(dir, 'hq');
mkdirSync(hqDir);
const hq = (...args: string[]) => runCli(runHq, args);

describe('tilstand hq refuses values it cannot use', () => {
  it('--hq: empty, a URL of another scheme, or a file', async () => {
    const file = join(dir, 'not-a-dir');
    writeFileSync(file, 'x');
    const cases: [string, string][] = [
      // Was "option '--hq' is required" although it was given (an unset variable).
      ['', "tilstand: option '--hq': expected a directory or s3://bucket/prefix?endpoint=…, got ''\n"],
      // Was exit 1, "no HQ at <cwd>/ftp:/host/x": taken for a relative directory.
      ['ftp://host/x', "tilstand: option '--hq': expected a directory or s3://bucket/prefix?endpoint=…, got 'ftp://host/x'\n"],
      ['S3://bucket/p', "tilstand: option '--hq': expected a directory or s3://bucket/prefix?endpoint=…, got 'S3://bucket/p'\n"],
      // Was exit 0 with no output: a file lists nothing, like an HQ nobody shipped to.
      [file, `tilstand: option '--hq': ${file} is a file; expected a directory or s3://bucket/prefix?endpoint=…\n`],
    ];
    for (const [value, err] of cases) {
      const r = await hq('tables', '--hq', value, '--site', '7');
      expect([r.code, r.out, r.err], value).toEqual([2, '', err]);
    }
  });

  it('--cache: empty', async () => {
    // Was accepted: the default cache was used instead of the (unset) one meant.
    const r = await hq('sites', '--hq', hqDir, '--cache', '');
    expect([r.code, r.out, r.err]).toEqual([2, '', "tilstand: option '--cache': expected a directory, got ''\n"]);
  });

  it('export --out: a directory, or a file in a directory that does not exist', async () => {
    const base = ['export', '--hq', hqDir, '--site', '7', '--table', 'stock', '--format', 'csv', '--out'];
    const isDir = await hq(...base, dir);
    // Was exit 5 after reading HQ, naming a rename of the temporary file.
    expect([isDir.code, isDir.out, isDir.err]).toEqual([2, '', `tilstand: option '--out': ${dir} is a directory; expected a file path\n`]);
    const noParent = await hq(...base, join(dir, 'missing', 'x.csv'));
    expect([noParent.code, noParent.out, noParent.err]).toEqual([2, '', `tilstand: option '--out': ${join(dir, 'missing')} is not a directory (the file's directory must exist)\n`]);
  });

  it('pull --out: a file, HQ itself or a folder inside it; and a site HQ has nothing of', async () => {
    const file = join(dir, 'a-file');
    writeFileSync(file, 'x');
    const base = ['pull', '--hq', hqDir, '--site', '7', '--out'];
    const cases: [string, string][] = [
      // Was exit 5, "ENOTDIR: not a directory, mkdir …".
      [file, `tilstand: option '--out': ${file} is a file; expected the directory of a warehouse to pull into\n`],
      // Was exit 0: HQ's files copied onto themselves, or a warehouse of copies inside HQ.
      [hqDir, `tilstand: option '--out': ${hqDir} is the HQ directory itself; pull into a warehouse outside it\n`],
      [join(hqDir, 'copy'), `tilstand: option '--out': ${join(hqDir, 'copy')} is inside the HQ directory ${hqDir}; pull into a warehouse outside it\n`],
      // A folder whose name starts with '..' is inside all the same.
      [join(hqDir, '..copy'), `tilstand: option '--out': ${join(hqDir, '..copy')} is inside the HQ directory ${hqDir}; pull into a warehouse outside it\n`],
    ];
    for (const [out, err] of cases) {
      const r = await hq(...base, out);
      expect([r.code, r.out, r.err], out).toEqual([2, '', err]);
    }
    // Beside HQ is fine, but no site has shipped here.
    const none = await hq(...base, join(dir, 'pulled'));
    // Was exit 0, "pulled site 7: 0 tables, 0 files …": a mistyped --site looked like a pull.
    expect([none.code, none.out, none.err]).toEqual([1, '', `tilstand: HQ has no site 7 (check --site; no site has shipped to ${hqDir} yet)\n`]);
    expect(readdirSync(hqDir)).toEqual([]);
  });
});
