// Counts in the lines `tilstand sync now` and `tilstand hq pull|export` print said in the singular
// for one: "planned 1 unit (1 step, …)", "pulled site …: 1 table, …", "exported 1 row of …" (they
// said "1 units", "1 tables", "1 rows"). Through the commands on real sites and a directory HQ.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog, RowKind } from '../../lsm/index.ts';
import { runCli } from '../../lsm/testing/cli.ts';
import { shipToDirectory } from '../test-support/ship.ts';
import { runHq } from './hq.ts';
import { runSync, syncNowLine } from './sync.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-sync-singular-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A site's data directory with `tables` (each of `rows` rows, one commit) and no contracts. */
function siteWith(site: string, tables: string[], rows: number): string {
  const data = join(dir, `site-${site}`);
  mkdirSync(data);
  writeFileSync(join(data, 'config.json'), JSON.stringify({ format: 1, site, hq: { target: null } }));
  const catalog = new Catalog(join(data, 'warehouse'));
  catalog.createDatabase(`site_${site}`, true);
  for (const name of tables) {
    const t = catalog.createTable({ database: `site_${site}`, table: name }, { fields: [{ name: 'item', type: 'STRING' }, { name: 'qty', type: 'INT' }], primaryKeys: ['item'], options: { bucket: '1' } });
    const w = t.newWriter();
    try {
      for (let i = 0; i < rows; i++) w.write([`item-${i}`, i], RowKind.INSERT);
      w.commit();
    } finally {
      w.close();
    }
  }
  return data;
}

describe('tilstand hq pull and export say one table, one row', () => {
  it('"1 table", "exported 1 row"; "2 tables", "exported 2 rows"', async () => {
    for (const [site, tables, rows] of [['1', ['stock'], 1], ['2', ['stock', 'resources'], 2]] as const) {
      const hq = join(dir, `hq-${site}`);
      mkdirSync(hq);
      await shipToDirectory(siteWith(site, [...tables], rows), site, hq);
      const into = join(dir, `pulled-${site}`);
      const pulled = await runCli(runHq, ['pull', '--hq', hq, '--site', site, '--out', into]);
      expect([pulled.code, pulled.err.replace(/^\[.*\n?/gm, '')], pulled.err).toEqual([0, '']);
      expect(pulled.out).toMatch(new RegExp(`^pulled site ${site}: ${tables.length} ${tables.length === 1 ? 'table' : 'tables'}, \\d+ files \\(\\d+ downloaded, \\d+ bytes\\) into `));
      const csv = join(dir, `stock-${site}.csv`);
      const exported = await runCli(runHq, ['export', '--hq', hq, '--site', site, '--table', 'stock', '--format', 'csv', '--out', csv]);
      expect([exported.code, exported.err, exported.out]).toEqual([0, '', `exported ${rows} ${rows === 1 ? 'row' : 'rows'} of site_${site}.stock to ${csv}\n`]);
    }
  }, 60_000);
});

describe('tilstand sync now says one unit, one step', () => {
  it('syncNowLine: "planned 1 unit (1 step, …)", "planned 2 units (2 steps, …)"', () => {
    const plan = (units: number, items: number) => ({ units: Array.from({ length: units }, (_, k) => `snapshot:t${k}:1`), items, bytes: 10, tagsCreated: [] });
    expect(syncNowLine({ plan: plan(1, 1), sentBytes: 10 })).toBe('planned 1 unit (1 step, 10 bytes); sent 10 bytes');
    expect(syncNowLine({ plan: plan(2, 2), sentBytes: 10 })).toBe('planned 2 units (2 steps, 10 bytes); sent 10 bytes');
    expect(syncNowLine({ plan: plan(1, 7), sentBytes: 10 })).toBe('planned 1 unit (7 steps, 10 bytes); sent 10 bytes');
  });

  it('through the command: one new commit of a synced table is one unit', async () => {
    const data = siteWith('one-unit', ['stock'], 1);
    const hq = join(dir, 'hq-one-unit');
    mkdirSync(hq);
    const first = await runCli(runSync, ['now', '--data', data, '--hq', hq]);
    expect(first.code, first.err).toBe(0);
    expect(first.out.split('\n')[0]).toMatch(/^planned 2 units \(\d+ steps, \d+ bytes\); sent \d+ bytes$/);
    const w = new Catalog(join(data, 'warehouse')).getTable({ database: 'site_one-unit', table: 'stock' }).newWriter();
    try {
      w.write(['item-new', 1], RowKind.INSERT);
      w.commit();
    } finally {
      w.close();
    }
    const next = await runCli(runSync, ['now', '--data', data, '--hq', hq]);
    expect(next.code, next.err).toBe(0);
    expect(next.out.split('\n')[0]).toMatch(/^planned 1 unit \(\d+ steps, \d+ bytes\); sent \d+ bytes$/);
  }, 60_000);
});
