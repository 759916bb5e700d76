// A site command that meets a damaged file exits 4, the code docs/operations.md gives for
// corruption, as `tilstand table` does for the same file: `status` on a table whose schema or
// snapshot file was cut short, or on a damaged journal.db or site.db, exited 5 ("other I/O"), so a
// script could not tell damage (restore from HQ) from a failing disk or a full one.
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { initDataDir } from '../init.ts';
import { runMain } from './test-support.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-corruption-exit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A new site's data directory, for one damaged file each. */
async function site(name: string): Promise<string> {
  const data = join(dir, name);
  await initDataDir({ data, site: 'north' });
  return data;
}

const cutInHalf = (file: string): void => truncateSync(file, Math.floor(statSync(file).size / 2));

describe('a damaged file under a site read command', () => {
  it('a table schema file cut short: status exits 4 naming the file, as table scan does', async () => {
    const data = await site('schema');
    const schema = join(data, 'warehouse', 'site_north.db', 'stock', 'schema', 'schema-0');
    cutInHalf(schema);
    const status = await runMain(['status', '--data', data]);
    expect(status.err).toContain(`corruption in ${schema}`);
    expect(status.code).toBe(4);
    const scan = await runMain(['table', 'scan', '--warehouse', join(data, 'warehouse'), 'site_north.stock']);
    expect([scan.code, scan.err]).toEqual([4, status.err]);
  });

  it('a journal.db that is not a database: status exits 4 naming the file', async () => {
    const data = await site('journal');
    writeFileSync(join(data, 'journal.db'), 'not a database, but long enough to be read as one '.repeat(40));
    const r = await runMain(['status', '--data', data]);
    expect(r.err).toContain(`journal file ${join(data, 'journal.db')} is corrupt`);
    expect(r.code).toBe(4);
  });

  it('a site.db cut short: status exits 4; users and modules list say it is site.db, exit 4', async () => {
    const data = await site('sitedb');
    const siteDb = join(data, 'site.db');
    cutInHalf(siteDb);
    const status = await runMain(['status', '--data', data]);
    expect([status.code, status.out]).toEqual([4, '']);
    // SQLite's own words name no file: they were all these said.
    for (const command of ['users', 'modules']) {
      const r = await runMain([command, 'list', '--data', data]);
      expect([r.code, r.out, r.err], command).toEqual([4, '', `tilstand: corruption in ${siteDb}: database disk image is malformed\n`]);
    }
    // One that is not SQLite's at all fails as it is opened (its journal mode set).
    writeFileSync(siteDb, 'this is no database; '.repeat(400));
    for (const command of ['users', 'modules']) {
      const r = await runMain([command, 'list', '--data', data]);
      expect([r.code, r.out, r.err], command).toEqual([4, '', `tilstand: corruption in ${siteDb}: file is not a database\n`]);
    }
  });
});

describe('tilstand replay export on a damaged site.db', () => {
  // site.db holds the zone the site runs in (its last start's record), which the fixture records
  // for the replay to run in. A damaged one was taken for "no record": the export went on with
  // this shell's zone, exit 0, and said nothing.
  it('refuses as corruption in site.db, exit 4, before it tags a table or writes --out', async () => {
    const data = await site('export');
    const siteDb = join(data, 'site.db');
    writeFileSync(siteDb, 'this is no database; '.repeat(400));
    const out = join(dir, 'fixture');
    const r = await runMain(['replay', 'export', '--data', data, '--tag', 'cut', '--until', 'now', '--out', out]);
    expect([r.code, r.out, r.err]).toEqual([4, '', `tilstand: corruption in ${siteDb}: file is not a database\n`]);
    expect(existsSync(out)).toBe(false);
    const tables = join(data, 'warehouse', 'site_north.db');
    expect(readdirSync(tables).filter((t) => existsSync(join(tables, t, 'tag')))).toEqual([]);
  });
})
