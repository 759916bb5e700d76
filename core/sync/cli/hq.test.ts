// `tilstand hq …` against a directory HQ, in-process: a --hq that names no directory is an error
// that says so (the commands only read: it is a typo, or no site has synced there yet), and an
// HQ no site has shipped to says that instead of printing nothing.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Catalog } from '../../lsm/index.ts';
import { runCli } from '../../lsm/testing/cli.ts';
import { parquetBytes } from '../hq/output.ts';
import { makeSite, writeStock, type SiteFixture } from '../test-support/site-fixture.ts';
import { shipToDirectory } from '../test-support/ship.ts';
import { runHq } from './hq.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-hq-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const hq = (...args: string[]) => runCli((argv, io) => runHq(argv, io), args);

describe('tilstand hq on a directory', () => {
  it('names a --hq directory that does not exist, for every command, with exit 1', async () => {
    const missing = join(dir, 'no-such-hq');
    for (const args of [['sites'], ['tables', '--site', 's1'], ['scan', '--site', 's1', '--table', 'stock']]) {
      const r = await hq(args[0]!, '--hq', missing, ...args.slice(1));
      expect(r.code, args[0]).toBe(1);
      expect(r.out, args[0]).toBe('');
      expect(r.err, args[0]).toBe(`tilstand: no HQ at ${missing}: the directory does not exist (check --hq; a site makes it at its first sync)\n`);
    }
  });

  it("refuses an argument it does not take ('proposals open' meant --status open), with exit 2", async () => {
    for (const [args, word] of [[['proposals', 'open', '--site', '7'], 'open'], [['sites', 'extra'], 'extra']] as const) {
      const r = await hq(args[0], '--hq', dir, ...args.slice(1));
      expect(r.code, args[0]).toBe(2); // was 0: every proposal listed, the word ignored
      expect(r.err, args[0]).toContain(`'hq ${args[0]}': unexpected argument '${word}'`);
    }
  });

  it("refuses an empty --out (an unset variable) rather than pulling into the current directory", async () => {
    for (const args of [['pull', '--site', '7'], ['export', '--site', '7', '--table', 'stock', '--format', 'csv']]) {
      const r = await hq(args[0]!, '--hq', dir, ...args.slice(1), '--out', '');
      expect([r.code, r.out, r.err], args[0]).toEqual([2, '', "tilstand: option '--out': expected a path, got ''\n"]);
    }
  });

  it('says so when no site has shipped to an HQ, and lists those that have', async () => {
    const empty = mkdtempSync(join(dir, 'empty-'));
    const none = await hq('sites', '--hq', empty);
    expect([none.code, none.out, none.err]).toEqual([0, '', `tilstand: no site has shipped to ${empty} yet\n`]);
    expect((await hq('sites', '--hq', empty, '--json')).out).toBe('[]\n');

    // The site's commits made within one second, the newest 318 ms into it: its time cut to the
    // second, copied into `hq scan --at`, read before every state HQ holds (exit 1).
    const second = Math.floor(Date.now() / 1000) * 1000 - 1000;
    let fx: SiteFixture;
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime(second + 100);
      fx = makeSite('7', { rows: 20 });
      vi.setSystemTime(second + 318);
      writeStock(fx, 20, 25, 2);
    } finally {
      vi.useRealTimers();
    }
    await shipToDirectory(fx.data, fx.site, empty);
    try {
      // Each site with its tables and how current HQ's copy is: its newest synced commit.
      const tables = ['stock', 'approval_inbox', 'decision_log'];
      const newest = Math.max(...tables.map((t) => fx.table(t).latestSnapshot()?.timeMillis ?? 0));
      expect(newest).toBe(second + 318);
      const some = await hq('sites', '--hq', empty);
      expect([some.code, some.err]).toEqual([0, '']);
      const lines = some.out.trimEnd().split('\n');
      expect(lines[0]).toMatch(/^site +tables +state as of +behind$/);
      expect(lines.slice(1)).toHaveLength(1);
      // To the millisecond, as `hq tags` prints its times.
      expect(lines[1]).toMatch(new RegExp(`^7 +3 +${new Date(newest).toISOString().replaceAll('.', '\\.')} +\\d+ (s|min)$`));
      // The time as printed, copied into --at: every table reads the state HQ holds of it, the
      // state the line describes (was exit 1: the time cut to the second was before all of them).
      const asOf = lines[1]!.split(/ {2,}/)[2]!;
      for (const t of tables) {
        const at = await hq('scan', '--hq', empty, '--site', '7', '--table', t, '--at', asOf);
        expect([at.code, at.out], `${t}: ${at.err}`).toEqual([0, (await hq('scan', '--hq', empty, '--site', '7', '--table', t)).out]);
        expect(at.err, t).toContain(`reading the latest synced snapshot (snapshot ${fx.table(t).latestSnapshot()!.id}, committed`);
      }
      expect(JSON.parse((await hq('sites', '--hq', empty, '--json')).out)).toEqual([{ site: '7', tables: 3, stateAsOfMs: newest }]);
    } finally {
      rmSync(fx.data, { recursive: true, force: true });
    }
  });
});

/** Syncs a site of `rows` stock rows into the directory HQ `hqDir`; returns the site (its data removed by the caller). */
async function shipSite(hqDir: string, rows: number): Promise<SiteFixture> {
  const fx = makeSite('7', { rows });
  await shipToDirectory(fx.data, fx.site, hqDir);
  return fx;
}

describe('tilstand hq export', () => {
  let small: string;
  let big: string;
  const sites: SiteFixture[] = [];
  beforeAll(async () => {
    small = mkdtempSync(join(dir, 'hq-small-'));
    big = mkdtempSync(join(dir, 'hq-big-'));
    sites.push(await shipSite(small, 5), await shipSite(big, 6000));
  });
  afterAll(() => {
    for (const fx of sites) rmSync(fx.data, { recursive: true, force: true });
  });

  it('writes the same CSV as before, and as `hq scan --format csv` prints, and Parquet of the rows read', async () => {
    const out = mkdtempSync(join(dir, 'out-'));
    const csv = join(out, 'stock.csv');
    const r = await hq('export', '--hq', small, '--site', '7', '--table', 'stock', '--format', 'csv', '--out', csv);
    expect([r.code, r.err, r.out]).toEqual([0, '', `exported 5 rows of site_7.stock to ${csv}\n`]);
    // The file as the export wrote it before it streamed (one string, header first, rows bucket by bucket).
    expect(readFileSync(csv, 'utf8')).toBe(EXPECTED_STOCK_CSV);
    for (const table of ['stock', 'approval_inbox', 'decision_log']) {
      const f = join(out, `${table}.csv`);
      expect((await hq('export', '--hq', small, '--site', '7', '--table', table, '--format', 'csv', '--out', f)).code, table).toBe(0);
      expect(readFileSync(f, 'utf8'), table).toBe((await hq('scan', '--hq', small, '--site', '7', '--table', table, '--format', 'csv')).out);
    }
    const pq = join(out, 'stock.parquet');
    expect((await hq('export', '--hq', small, '--site', '7', '--table', 'stock', '--format', 'parquet', '--out', pq)).code).toBe(0);
    const fields = sites[0]!.table('stock').schema.fields;
    const rows = (await hq('scan', '--hq', small, '--site', '7', '--table', 'stock')).out.trim().split('\n').map((l) => Object.values(JSON.parse(l) as object));
    expect(Buffer.compare(readFileSync(pq), Buffer.from(parquetBytes(fields, rows)))).toBe(0);
    // Nothing else left beside them: the temporary files were renamed into place.
    expect(readdirSync(out).sort()).toEqual(['approval_inbox.csv', 'decision_log.csv', 'stock.csv', 'stock.parquet']);
  });

  it('leaves no file at --out and no temporary file when the table turns out damaged midway (exit 4)', async () => {
    const hqCopy = mkdtempSync(join(dir, 'hq-damaged-'));
    cpSync(big, hqCopy, { recursive: true });
    const bucket1 = join(hqCopy, 'site_7.db', 'stock', 'bucket-1');
    for (const f of readdirSync(bucket1)) truncateSync(join(bucket1, f), Math.floor(statSync(join(bucket1, f)).size / 2));
    const out = mkdtempSync(join(dir, 'out-'));
    const csv = join(out, 'stock.csv');
    const r = await hq('export', '--hq', hqCopy, '--site', '7', '--table', 'stock', '--format', 'csv', '--out', csv);
    expect(r.code, r.err).toBe(4);
    expect(r.out).toBe('');
    expect(r.err).toContain('bucket-1');
    expect(readdirSync(out)).toEqual([]);
  });

  it.skipIf(process.platform === 'win32')('leaves no truncated file at --out when the disk refuses a write midway (exit 5)', () => {
    // A real write error: the child may write at most 64 KiB to any file (ulimit -f; Node ignores
    // SIGXFSZ, so write(2) fails with EFBIG), and the export is larger than that.
    const out = mkdtempSync(join(dir, 'out-'));
    const csv = join(out, 'stock.csv');
    const bin = join(REPO, 'bin', 'tilstand.mjs');
    const r = spawnSync('bash', ['-c', 'ulimit -f 64 && exec "$0" "$@"', process.execPath, bin, 'hq', 'export', '--hq', big, '--site', '7', '--table', 'stock', '--format', 'csv', '--out', csv], { encoding: 'utf8', timeout: 60_000 });
    // Was a 64 KiB file at --out that looked like a finished export.
    expect(readdirSync(out), r.stderr).toEqual([]);
    expect(r.status, r.stderr).toBe(5);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`tilstand: cannot write ${csv}: EFBIG: file too large, write\n`);
    // The same export without the limit is whole.
    const ok = spawnSync(process.execPath, [bin, 'hq', 'export', '--hq', big, '--site', '7', '--table', 'stock', '--format', 'csv', '--out', csv], { encoding: 'utf8', timeout: 60_000 });
    expect([ok.status, ok.stderr]).toEqual([0, '']);
    expect(statSync(csv).size).toBeGreaterThan(64 * 1024);
    expect(readFileSync(csv, 'utf8').trimEnd().split('\n')).toHaveLength(6001);
  });
});

describe('tilstand hq pull', () => {
  it.skipIf(process.platform === 'win32')('goes on to its normal exit when stderr is a closed pipe (`2>&1 | head -1`): the progress bar stops, the process does not crash', async () => {
    const hqDir = mkdtempSync(join(dir, 'hq-pull-'));
    const fx = await shipSite(hqDir, 20);
    try {
      const dest = join(mkdtempSync(join(dir, 'pulled-')), 'warehouse');
      const child = spawn(process.execPath, [join(REPO, 'bin', 'tilstand.mjs'), 'hq', 'pull', '--hq', hqDir, '--site', '7', '--out', dest], { stdio: ['ignore', 'pipe', 'pipe'] });
      // The reader of stderr goes away before the first progress line: every write to it is EPIPE.
      child.stderr!.destroy();
      let out = '';
      child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
      const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((done) => child.on('close', (c, sig) => done([c, sig])));
      // Was exit 1: the EPIPE on stderr was an unhandled 'error' event, which ended the process.
      expect([code, signal], out).toEqual([0, null]);
      expect(out).toMatch(/^pulled site 7: \d+ tables, \d+ files \(\d+ downloaded, \d+ bytes\) into /);
      expect(out.endsWith(` into ${dest}\n`), out).toBe(true);
      // And the pull is whole: the pulled table reads as the site's.
      // (`.tilstand` holds the pull's record of what it wrote, hq/pull-record.ts; catalogs skip it.)
      expect(readdirSync(join(dest, 'site_7.db')).sort()).toEqual(['.tilstand', 'approval_inbox', 'decision_log', 'stock']);
      expect(new Catalog(dest).listTables('site_7').sort()).toEqual(['approval_inbox', 'decision_log', 'stock']);
      expect(new Catalog(dest).getTable({ database: 'site_7', table: 'stock' }).scanRows({})).toEqual(fx.table('stock').scanRows({}));
    } finally {
      rmSync(fx.data, { recursive: true, force: true });
    }
  }, 120_000);
});

describe('tilstand hq sites', () => {
  it.skipIf(process.platform === 'win32')('on an HQ no site has shipped to, exits 0 when stderr is a closed pipe (`2>&1 | head -1`): the note is lost, the process does not crash', async () => {
    const empty = mkdtempSync(join(dir, 'empty-pipe-'));
    const child = spawn(process.execPath, [join(REPO, 'bin', 'tilstand.mjs'), 'hq', 'sites', '--hq', empty], { stdio: ['ignore', 'pipe', 'pipe'] });
    // The reader of stderr goes away before the note is written: the write is EPIPE.
    child.stderr!.destroy();
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((done) => child.on('close', (c, sig) => done([c, sig])));
    // Was exit 1: the EPIPE on stderr was an unhandled 'error' event, which ended the process.
    expect([code, signal, out]).toEqual([0, null, '']);
  }, 60_000);
});

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

const EXPECTED_STOCK_CSV = [
  'item,location,qty,note',
  'item-0,loc-0,0,"note 0 "', // a trailing space quoted
  'item-1,loc-0,1,note 1 x',
  'item-2,loc-0,2,note 2 xx',
  'item-3,loc-0,3,note 3 xxx',
  'item-4,loc-0,4,note 4 xxxx',
  '',
].join('\n');
