// `tilstand status` on a site.db that is damaged exits 4 and names the file, as `users list`
// and `modules list` do: SQLite's own words ("database disk image is malformed", "file is not a
// database") name none, and status said only those.
import { mkdtempSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { initDataDir } from '../init.ts';
import { runMain } from './test-support.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-status-sitedb-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('tilstand status on a damaged site.db', () => {
  it('cut short: exit 4, naming site.db', async () => {
    const data = join(dir, 'cut');
    await initDataDir({ data, site: 'north' });
    const siteDb = join(data, 'site.db');
    truncateSync(siteDb, Math.floor(statSync(siteDb).size / 2));
    const r = await runMain(['status', '--data', data]);
    expect([r.code, r.out, r.err]).toEqual([4, '', `tilstand: corruption in ${siteDb}: database disk image is malformed\n`]);
  });

  it('not a database at all: exit 4, naming site.db', async () => {
    const data = join(dir, 'notadb');
    await initDataDir({ data, site: 'north' });
    const siteDb = join(data, 'site.db');
    writeFileSync(siteDb, 'this is no database; '.repeat(400));
    const r = await runMain(['status', '--data', data]);
    expect([r.code, r.out, r.err]).toEqual([4, '', `tilstand: corruption in ${siteDb}: file is not a database\n`]);
  });
});
