// `tilstand restore` beside a site that runs on the data directory without sync. Such a site holds
// no sync lock (core/sync restore.ts takes that), but its control socket answers: the restore is
// refused before anything is read or written, exit 3, as a second start is. Its tables' writer
// locks (which a --force restore of its own site would also meet) do not cover a restore of
// another site into the directory: that site's tables are not the running one's, and the restore
// dropped the running site's outbox record and wrote its tables beside it.

import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog } from '../../lsm/index.ts';
import { RESTORE_UNFINISHED } from '../../sync/restore.ts';
import { dataPaths } from '../config.ts';
import { initDataDir } from '../init.ts';
import { Site } from '../site.ts';
import { runMain as cli } from './test-support.ts';

const SCRYPT = { N: 1024, r: 8, p: 1 };
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-restore-running-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A site `site` in `<dir>/<site>` with a row in stock, sent to the directory HQ `<dir>/hq`. */
async function sentSite(site: string): Promise<string> {
  const data = join(dir, site);
  await initDataDir({ data, site, scrypt: SCRYPT });
  const w = new Catalog(join(data, 'warehouse')).getTable({ database: `site_${site}`, table: 'stock' }).newWriter();
  w.writeRecord({ item: 'ITEM-1', location: 'A-01', on_hand: 7, inventory_seq: 3n });
  w.commit({ 'tilstand.hwm.inventory/stock': '3' });
  w.close();
  const r = await cli(['sync', 'now', '--data', data, '--hq', join(dir, 'hq')]);
  expect(r.code, r.err).toBe(0);
  return data;
}

/** The running site's outbox record of what HQ holds (a restore drops it). */
function atHq(data: string): number {
  const db = new Database(join(data, 'site.db'), { readonly: true });
  try {
    return (db.prepare('SELECT count(*) AS n FROM sync_at_hq').get() as { n: number }).n;
  } finally {
    db.close();
  }
}

describe('tilstand restore beside a running site without sync', () => {
  it('is refused, exit 3, naming the control socket; with --force too, and for another site', async () => {
    const north = await sentSite('north');
    await sentSite('south');
    const hq = join(dir, 'hq');
    const site = await Site.start({ data: north, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    try {
      const socket = dataPaths(north).controlSocket;
      expect(existsSync(socket)).toBe(true);
      // Which tables the running site holds the writer lock of: every table it has (its ingest's
      // and its inbox's), in this process.
      const db = join(north, 'warehouse', 'site_north.db');
      const tables = new Catalog(join(north, 'warehouse')).listTables('site_north');
      expect(tables.length).toBeGreaterThan(0);
      for (const t of tables) expect(JSON.parse(readFileSync(join(db, t, '.writer.lock'), 'utf8')).pid, t).toBe(process.pid);
      const held = atHq(north);
      expect(held).toBeGreaterThan(0);

      // Another site into the running site's directory: nothing of the running site's tables is
      // removed, so no writer lock is met; without the socket check it restored south beside north
      // and dropped north's outbox record (exit 0).
      const other = await cli(['restore', '--data', north, '--hq', hq, '--site', 'south', '--force']);
      expect(other.code, other.err).toBe(3);
      expect(other.err).toContain(`a site is running on ${north} (${socket} answers): stop it first`);
      // Its own site, with --force: refused the same way, before the tables' locks are tried.
      const own = await cli(['restore', '--data', north, '--hq', hq, '--site', 'north', '--force']);
      expect(own.code, own.err).toBe(3);
      expect(own.err).toContain(`a site is running on ${north} (${socket} answers): stop it first`);

      expect(existsSync(join(north, 'warehouse', 'site_south.db'))).toBe(false);
      expect(existsSync(join(north, RESTORE_UNFINISHED))).toBe(false);
      expect(existsSync(join(north, 'restore-note.json'))).toBe(false);
      expect(atHq(north)).toBe(held);
      expect(new Catalog(join(north, 'warehouse')).getTable({ database: 'site_north', table: 'stock' }).scanRows({}).length).toBe(1);
    } finally {
      await site.stop();
    }
    // Stopped, the same restore goes ahead.
    const r = await cli(['restore', '--data', north, '--hq', hq, '--site', 'north', '--force']);
    expect(r.code, r.err).toBe(0);
  }, 60_000);
});
