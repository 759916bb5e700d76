// `tilstand sync status` and `sync now` on a site.db that is damaged say so, naming the file, with
// exit 4 (a damaged file, docs/hq.md): they printed SQLite's "file is not a database" alone,
// naming no file, and exited 5, the code of a failing disk.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lsm/testing/cli.ts';
import { runSync } from './sync.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-sync-damaged-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('tilstand sync status on a damaged site.db', () => {
  it('reports corruption in site.db, exit 4, nothing on stdout', async () => {
    const data = join(dir, 'site');
    mkdirSync(data);
    const siteDb = join(data, 'site.db');
    // Not SQLite's header: what a file overwritten by something else, or one cut at its start, holds.
    writeFileSync(siteDb, 'this is no database; '.repeat(400));
    const r = await runCli(runSync, ['status', '--data', data]);
    expect([r.code, r.out]).toEqual([4, '']);
    expect(r.err).toBe(`tilstand: corruption in ${siteDb}: file is not a database\n`);
  });

  it('sync now: the same, before it sends anything', async () => {
    const data = join(dir, 'site-now');
    const hq = join(dir, 'hq');
    mkdirSync(data);
    mkdirSync(hq);
    writeFileSync(join(data, 'config.json'), JSON.stringify({ site: 'north' }));
    const siteDb = join(data, 'site.db');
    writeFileSync(siteDb, 'this is no database; '.repeat(400));
    const r = await runCli(runSync, ['now', '--data', data, '--hq', hq, '--max-rounds', '1']);
    expect([r.code, r.out, r.err]).toEqual([4, '', `tilstand: corruption in ${siteDb}: file is not a database\n`]);
    expect(readdirSync(hq)).toEqual([]);
  });
});
