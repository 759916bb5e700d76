// A restore killed midway (kill -9, a power cut) leaves part of HQ's tables in the data directory.
// Its rerun recognises its own unfinished restore (`restore-unfinished.json`, written before the
// first table file) and does it again without --force; a directory holding a site — a finished
// restore's too — is still refused without it.

import { spawn } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from '../lsm/index.ts';
import { SyncEngine } from './engine.ts';
import { sitePrefix } from './names.ts';
import { readRestoreNote, restoreSite, RESTORE_UNFINISHED } from './restore.ts';
import { DirectoryTarget } from './targets/directory.ts';
import { makeSite, scanSorted, tempDir } from './test-support/site-fixture.ts';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

/** Every row of every table of the site in `data`, by table (what a restore must bring back). */
function rowsOf(data: string, site: string): Record<string, string[]> {
  const catalog = new Catalog(join(data, 'warehouse'));
  const db = `site_${site}`;
  return Object.fromEntries(catalog.listTables(db).sort().map((t) => [t, scanSorted(catalog.getTable({ database: db, table: t }))]));
}

/** Runs a restore in a child that kills itself (SIGKILL) as it asks HQ for its `killAtGet`th file. */
async function killedRestore(dataDir: string, hq: string, site: string, killAtGet: number): Promise<NodeJS.Signals | null> {
  const script = `
    const { restoreSite } = await import(${JSON.stringify(resolve(__dirname, 'restore.ts'))});
    const { DirectoryTarget } = await import(${JSON.stringify(resolve(__dirname, 'targets/directory.ts'))});
    class Dying extends DirectoryTarget {
      gets = 0;
      async get(key) {
        if (++this.gets === ${killAtGet}) process.kill(process.pid, 'SIGKILL');
        return super.get(key);
      }
    }
    await restoreSite({ dataDir: ${JSON.stringify(dataDir)}, target: new Dying(${JSON.stringify(hq)}), site: ${JSON.stringify(site)} });
    console.log('not killed');
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const signal = await new Promise<NodeJS.Signals | null>((done) => child.on('exit', (_code, sig) => done(sig)));
  expect(out).toBe('');
  return signal;
}

describe('a restore killed midway', () => {
  it('is done again by its rerun without --force; a restored site is still refused without it', async () => {
    const fx = makeSite('72', { rows: 400 });
    const hq = tempDir('hq');
    const fresh = tempDir('fresh');
    const counted = tempDir('counted');
    cleanup.push(fx.data, hq, fresh, counted);
    const e = new SyncEngine({ dataDir: fx.data, site: fx.site, target: new DirectoryTarget(hq, { writePrefix: sitePrefix(fx.site) }), scheduledTags: null });
    await e.syncNow(5);
    await e.close();
    // How many files a whole restore asks HQ for: the child dies halfway through them.
    let gets = 0;
    const counting = new DirectoryTarget(hq);
    const get = counting.get.bind(counting);
    counting.get = async (key) => (gets++, get(key));
    await restoreSite({ dataDir: counted, target: counting, site: fx.site });
    expect(gets).toBeGreaterThan(4);

    expect(await killedRestore(fresh, hq, fx.site, Math.floor(gets / 2))).toBe('SIGKILL');
    // What it left: some of the tables, no note, and the mark of its unfinished restore.
    expect(new Catalog(join(fresh, 'warehouse')).listTables(`site_${fx.site}`).length).toBeGreaterThan(0);
    expect(readRestoreNote(fresh)).toBeUndefined();
    expect(existsSync(join(fresh, RESTORE_UNFINISHED))).toBe(true);

    // Was: "already holds tables …; restore into a fresh data directory or pass --force".
    const note = await restoreSite({ dataDir: fresh, target: new DirectoryTarget(hq), site: fx.site });
    expect(readRestoreNote(fresh)).toEqual(note);
    expect(rowsOf(fresh, fx.site)).toEqual(rowsOf(fx.data, fx.site));
    expect(existsSync(join(fresh, RESTORE_UNFINISHED))).toBe(false);

    // A finished restore is a site: refused without --force, as any directory holding tables.
    await expect(restoreSite({ dataDir: fresh, target: new DirectoryTarget(hq), site: fx.site })).rejects.toThrow(/already holds tables .*pass --force/);
    await expect(restoreSite({ dataDir: fx.data, target: new DirectoryTarget(hq), site: fx.site })).rejects.toThrow(/already holds tables .*pass --force/);
  }, 60_000);
});
