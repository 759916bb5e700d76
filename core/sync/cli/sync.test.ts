// `tilstand sync status` of a stopped site reads its outbox and changes nothing in site.db.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lsm/testing/cli.ts';
import { openOutboxDb } from '../outbox.ts';
import { runRestore, runSync } from './sync.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-sync-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const sync = (...args: string[]) => runCli((argv, io) => runSync(argv, io), args);
const tables = (path: string) => {
  const db = new Database(path, { readonly: true });
  try {
    return (db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).pluck().all() as string[]).filter((n) => n.startsWith('sync_'));
  } finally {
    db.close();
  }
};

describe('tilstand sync status', () => {
  it('answers for a site that never synced without creating the outbox in its site.db', async () => {
    const data = join(dir, 'never');
    mkdirSync(data);
    new Database(join(data, 'site.db')).exec('CREATE TABLE users (name TEXT)');
    const r = await sync('status', '--data', data, '--json');
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ pendingItems: 0, pendingBytes: 0 });
    expect(tables(join(data, 'site.db'))).toEqual([]); // was sync_at_hq, sync_outbox, sync_state: a status wrote them
  });

  it('reads the outbox of a site that has one', async () => {
    const data = join(dir, 'synced');
    mkdirSync(data);
    openOutboxDb(join(data, 'site.db')).close();
    const before = tables(join(data, 'site.db'));
    const r = await sync('status', '--data', data, '--json');
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ pendingItems: 0 });
    expect(tables(join(data, 'site.db'))).toEqual(before);
  });
});

describe('--help', () => {
  it('prints the usage and runs nothing: restore --help with its flags rebuilds no data directory', async () => {
    const data = join(dir, 'help-restore');
    const hq = join(dir, 'help-hq');
    mkdirSync(hq);
    const r = await runCli((argv, io) => runRestore(argv, io), ['--data', data, '--hq', hq, '--site', '7', '--help']);
    // Was exit 1 "HQ … has no tables for site 7", with <data>/warehouse made: the restore ran.
    expect([r.code, r.err]).toEqual([0, '']);
    expect(r.out).toBe(
      'usage:\n  tilstand restore --data <dir> --hq <dir|s3://…> --site <id> [--access-key <key>] [--secret-key <secret>]\n                    [--force] [--fall-back-to-tag] [--json]\n' +
        '                                           rebuild a site from HQ (--fall-back-to-tag: a table whose latest\n' +
        '                                           snapshot at HQ is damaged comes back at its newest sound tag)\n',
    );
    expect(existsSync(data)).toBe(false);
    const bare = await runCli((argv, io) => runRestore(argv, io), ['--help']);
    expect([bare.code, bare.err]).toEqual([0, '']); // was 2: "option '--data' <dir> is required"
  });

  it('sync status --help and sync now --help print their usage, exit 0', async () => {
    const status = await sync('status', '--data', join(dir, 'no-site'), '--help');
    expect([status.code, status.err, status.out]).toEqual([0, '', 'usage:\n  tilstand sync status [--data <dir>] [--json]                 outbox progress and health\n']);
    const now = await sync('now', '--data', join(dir, 'no-site'), '--help');
    expect([now.code, now.err]).toEqual([0, '']);
    expect(now.out.split('\n')).toEqual(['usage:', expect.stringMatching(/^  tilstand sync now \[--data <dir>\]/), expect.stringMatching(/^ +\[--json\]/), expect.stringMatching(/^ +ship to HQ now/), expect.stringMatching(/^ +this directory becomes/), '']);
  });

  it('refuses an empty --data (an unset variable) rather than using the current directory', async () => {
    const hq = join(dir, 'help-hq');
    const r = await runCli((argv, io) => runRestore(argv, io), ['--data', '', '--hq', hq, '--site', '7']);
    // Was 1 after it had started to restore into the current directory.
    expect([r.code, r.out, r.err]).toEqual([2, '', "tilstand: option '--data': expected a site's data directory, got ''\n"]);
    const s = await sync('status', '--data=');
    expect([s.code, s.err]).toEqual([2, "tilstand: option '--data': expected a site's data directory, got ''\n"]);
  });
});
