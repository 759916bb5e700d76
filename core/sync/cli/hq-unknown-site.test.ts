// `tilstand hq <command> --site <id>` for a site HQ has nothing of (a mistyped id): every command
// that takes --site says "HQ has no site <id>", exit 1, naming the sites a directory HQ has —
// `hq tables` printed nothing and exited 0 (the site looked like one without tables), and the
// table commands said only that the table was missing. And the usage shows how HQ is reached
// (--access-key/--secret-key/--cache) and what each flag takes.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog } from '../../lsm/index.ts';
import { runCli } from '../../lsm/testing/cli.ts';
import { sitePrefix } from '../names.ts';
import { S3Target } from '../targets/s3.ts';
import { startS3, type S3Fixture } from '../test-support/site-fixture.ts';
import { HQ_FLAGS, hqUsage, runHq } from './hq.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-hq-unknown-site-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const hq = (...args: string[]) => runCli(runHq, args);

/** Every command that takes --site, with the rest of what it needs (outputs in `dir`). */
const SITE_COMMANDS: string[][] = [
  ['tables'],
  ['tags', '--table', 'stock'],
  ['scan', '--table', 'stock'],
  ['diff', '--table', 'stock', '--from', 'a', '--to', 'b'],
  ['proposals'],
  ['pull', '--out', join(dir, 'pulled')],
  ['export', '--table', 'stock', '--format', 'csv', '--out', join(dir, 'stock.csv')],
];

describe('tilstand hq --site of a site HQ has nothing of', () => {
  const hqDir = join(dir, 'hq');
  beforeAll(() => {
    // An HQ holding sites 3 and 7 (7 with a table), laid out as the sites ship: a Paimon warehouse.
    const catalog = new Catalog(hqDir);
    for (const site of ['3', '7']) {
      catalog.createDatabase(`site_${site}`);
      catalog.createTable({ database: `site_${site}`, table: 'stock' }, { fields: [{ name: 'item', type: 'STRING' }, { name: 'qty', type: 'INT' }], primaryKeys: ['item'], options: { bucket: '1' } });
    }
  });

  it('is exit 1 naming the site and the sites HQ has, for every command that takes --site', async () => {
    expect(SITE_COMMANDS.map((c) => c[0]).sort()).toEqual(Object.keys(HQ_FLAGS).filter((c) => 'site' in HQ_FLAGS[c as keyof typeof HQ_FLAGS]).sort());
    for (const [sub, ...rest] of SITE_COMMANDS) {
      const r = await hq(sub!, '--hq', hqDir, '--site', '8', ...rest);
      // `tables` was exit 0 with nothing printed; the others named only the table.
      expect([r.code, r.out, r.err], sub).toEqual([1, '', 'tilstand: HQ has no site 8 (check --site; sites at HQ: 3, 7)\n']);
    }
  });

  it('says no site has shipped when HQ is empty', async () => {
    const empty = join(dir, 'empty-hq');
    mkdirSync(empty);
    for (const [sub, ...rest] of SITE_COMMANDS) {
      const r = await hq(sub!, '--hq', empty, '--site', '7', ...rest);
      expect([r.code, r.out, r.err], sub).toEqual([1, '', `tilstand: HQ has no site 7 (check --site; no site has shipped to ${empty} yet)\n`]);
    }
  });

  it('still answers for a site HQ has, and names a missing table as such', async () => {
    const tables = await hq('tables', '--hq', hqDir, '--site', '7');
    expect([tables.code, tables.out, tables.err]).toEqual([0, 'stock\n', '']);
    const json = await hq('tables', '--hq', hqDir, '--site', '7', '--json');
    expect([json.code, json.out]).toEqual([0, '["stock"]\n']);
    const missing = await hq('scan', '--hq', hqDir, '--site', '7', '--table', 'orders');
    expect([missing.code, missing.err]).toEqual([1, "tilstand: HQ has no table 'orders' for site 7 (it has: stock)\n"]);
    const proposals = await hq('proposals', '--hq', hqDir, '--site', '7');
    expect([proposals.code, proposals.err]).toEqual([1, "tilstand: HQ has no table 'approval_inbox' for site 7 (it has: stock)\n"]);
    // A site that shipped only its contracts so far: known, without tables.
    mkdirSync(join(hqDir, 'site_9.db', '.tilstand', 'contracts'), { recursive: true });
    writeFileSync(join(hqDir, 'site_9.db', '.tilstand', 'contracts', 'c.json'), '{}');
    expect(await hq('tables', '--hq', hqDir, '--site', '9')).toEqual({ code: 0, out: '', err: '' });
    const pull = await hq('pull', '--hq', hqDir, '--site', '9', '--out', join(dir, 'pulled-9'));
    expect([pull.code, pull.err]).toEqual([1, 'tilstand: HQ has no tables of site 9 (check --site; `tilstand hq sites` lists the sites that shipped)\n']);
  });

  it('says what is wrong with the options before it looks for the site', async () => {
    const cases: [string[], string][] = [
      // Was "option '--format': expected parquet or csv, got ''": it was not given at all.
      [['export', '--site', '8', '--table', 'stock', '--out', join(dir, 'x.csv')], "option '--format' parquet|csv is required for 'hq export'"],
      // Was exit 1 (no table / no site): HQ was read before the options were checked.
      [['scan', '--site', '8', '--table', 'stock', '--format', 'xml'], "option '--format': expected jsonl or csv, got 'xml'"],
      // A diff needs its from side (its to side may be left out: the latest), in one form.
      [['diff', '--site', '8', '--table', 'stock', '--to', 'b'], "option '--from' <tag>, '--from-snapshot' <id> or '--from-at' <ISO time> is required for 'hq diff'"],
      [['diff', '--site', '8', '--table', 'stock', '--from', 'a', '--from-at', '2026-12-05T08:00:00Z'], "give one of --from, --from-snapshot, --from-at for 'hq diff' (got --from and --from-at)"],
      [['diff', '--site', '8', '--table', 'stock', '--from-snapshot', '0'], "option '--from-snapshot': expected a snapshot id (a positive integer), got '0'"],
      // Was the bare id check, naming no option.
      [['tags', '--site', '../7', '--table', 'stock'], "option '--site': site id '../7' must be 1–64 letters, digits, '_' or '-'"],
    ];
    for (const [[sub, ...rest], message] of cases) {
      const r = await hq(sub!, '--hq', hqDir, ...rest);
      expect([r.code, r.out, r.err], sub).toEqual([2, '', `tilstand: ${message}\n`]);
    }
  });

  describe('on S3', () => {
    let s3: S3Fixture;
    beforeAll(async () => {
      s3 = await startS3();
      const t = new S3Target({ bucket: s3.bucket, root: '', endpoint: s3.endpoint, accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER', writePrefix: sitePrefix('7') });
      await t.putPointer(`${sitePrefix('7')}stock/schema/schema-0`, Buffer.from('{}'));
      await t.close();
    });
    afterAll(async () => {
      await s3?.close();
    });

    it('is exit 1 naming the site, pointing at `hq sites` (listing the sites would list every key)', async () => {
      const url = `s3://${s3.bucket}?endpoint=${s3.endpoint}`;
      const creds = ['--access-key', 'S3RVER', '--secret-key', 'S3RVER', '--cache', join(dir, 's3-cache')];
      const r = await hq('tables', '--hq', url, ...creds, '--site', '8');
      expect([r.code, r.out, r.err]).toEqual([1, '', 'tilstand: HQ has no site 8 (check --site; `tilstand hq sites` lists the sites that shipped)\n']);
      const known = await hq('tables', '--hq', url, ...creds, '--site', '7');
      expect([known.code, known.out, known.err]).toEqual([0, 'stock\n', '']);
    }, 30_000);
  });
});

describe('tilstand hq usage and credentials', () => {
  it("each command's --help shows every flag it takes, each with what to type after it", async () => {
    for (const [sub, flags] of Object.entries(HQ_FLAGS)) {
      const help = await hq(sub, '--help');
      expect(help.code, sub).toBe(0);
      for (const [flag, spec] of Object.entries(flags)) {
        // A string flag followed by its value (`--tag <name>`, `--format jsonl|csv`), not bare
        // (`[--tag|--snapshot|--at]` showed neither the value nor that --access-key existed).
        const shown = spec.type === 'string' ? new RegExp(`--${flag} [^\\s|\\]]`) : new RegExp(`--${flag}\\b`);
        expect(help.out, `hq ${sub} --${flag}`).toMatch(shown);
      }
      // And no flag in it that the command does not take.
      for (const [used] of help.out.matchAll(/--[a-z][a-z-]*/g)) expect(Object.keys(flags), `hq ${sub}: ${used} in its usage`).toContain(used.slice(2));
    }
    // The environment's keys are what a service uses: the usage says they are read.
    expect(hqUsage.join('\n')).toContain('TILSTAND_HQ_ACCESS_KEY and TILSTAND_HQ_SECRET_KEY');
  });

  it('refuses an empty --access-key or --secret-key (an unset variable) rather than falling back to the environment', async () => {
    for (const flag of ['access-key', 'secret-key']) {
      const r = await hq('sites', '--hq', `s3://hq?endpoint=http://127.0.0.1:9`, `--${flag}`, '');
      // Was the environment's key used in its place (or "S3 target needs credentials: set TILSTAND_HQ_…").
      expect([r.code, r.out, r.err], flag).toEqual([2, '', `tilstand: option '--${flag}': expected the S3 ${flag.replace('-', ' ')}, got ''\n`]);
    }
  });
});
