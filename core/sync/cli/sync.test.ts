// `tilstand sync status` of a stopped site reads its outbox and changes nothing in site.db.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lsm/testing/cli.ts';
import { openOutboxDb } from '../outbox.ts';
import { runSync } from './sync.ts';

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
