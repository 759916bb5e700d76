// `tilstand init` on real directories: layout, permissions, hashed credentials, refusals.

import Database from 'better-sqlite3';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog } from '../lsm/index.ts';
import { runMain as cli } from './cli/test-support.ts';
import { readConfig } from './config.ts';
import { fsyncedDuring, fsyncedWhile } from '../lsm/testing/fsync-spy.ts';
import { writeConfig } from './config.ts';
import { FirstRunBackend } from './first-run.ts';
import { DEMO_RULE_FILE, initDataDir, readDemoRule } from './init.ts';
import { demoConfig } from './demo/site.ts';
import { ModuleCredentials } from './site-db.ts';
import { UserStore } from '../inbox/users.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-init-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('init', () => {
  it('creates the layout of DESIGN.md with seed contracts, empty tables and the admin user', async () => {
    const data = join(dir, 'd');
    const r = await cli(['init', '--data', data, '--site', 'oslo-1', '--admin', 'Kari Lead', '--pin', '4711']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toContain('initialized site oslo-1');
    for (const name of ['config.json', 'journal.db', 'site.db', 'contracts', 'logs', 'warehouse', 'secrets']) expect(existsSync(join(data, name)), name).toBe(true);
    expect(readConfig(data).site).toBe('oslo-1');
    expect(new Catalog(join(data, 'warehouse')).listTables('site_oslo-1')).toEqual(['dead_letters', 'resources', 'stock', 'work_queue']);
    expect(readdirSync(join(data, 'contracts')).sort()).toEqual(['commerce.reservations', 'inventory.stock', 'operations.jobs', 'operations.resources', 'procurement.inbound']);

    const users = await cli(['users', 'list', '--data', data]);
    expect(users.out).toContain('Kari Lead  admin');
    expect(users.out).toContain('sign-in: pin');
  });

  it('rewrites config.json durably: a temporary file fsynced, renamed, the data directory fsynced', async () => {
    const data = join(dir, 'site');
    await initDataDir({ data, site: 'durable', admin: { name: 'ada', pin: '4711' }, scrypt: { N: 1024, r: 8, p: 1 } });
    const before = readConfig(data);
    const synced = fsyncedDuring(() => writeConfig(data, before));
    expect(synced.some((p) => p.startsWith(join(data, '.config.json.')))).toBe(true);
    expect(synced).toContain(data);
    expect(readConfig(data)).toEqual(before);
    expect(readdirSync(data).filter((f) => f.includes('.tmp'))).toEqual([]);
  });

  it('writes the secrets file and the demo rule durably: temporary files fsynced, renamed, their folders fsynced, the mode too', async () => {
    // Written plainly, a power cut after init could leave either empty or missing under a
    // config.json that names the rule: the next start then found the rule file corrupt.
    const data = join(dir, 'demo');
    const synced = await fsyncedWhile(() => initDataDir({ data, site: 'demo', config: demoConfig, demoRule: true, scrypt: { N: 1024, r: 8, p: 1 } }));
    const secrets = join(data, 'secrets', 'modules.json');
    const rule = join(data, DEMO_RULE_FILE);
    const order = (p: string) => synced.indexOf(p);
    expect(synced.some((p) => p.startsWith(join(data, 'secrets', '.modules.json.')))).toBe(true);
    expect(synced.some((p) => p.startsWith(join(dirname(rule), `.${basename(rule)}.`)))).toBe(true);
    expect(order(join(data, 'secrets'))).toBeGreaterThan(-1);
    expect(order(dirname(rule))).toBeGreaterThan(-1);
    // The 0600 set after the rename is made durable too (the file is fsynced after its chmod).
    expect(order(secrets)).toBeGreaterThan(order(join(data, 'secrets')));
    expect(statSync(secrets).mode & 0o777).toBe(0o600);
    expect(Object.keys(JSON.parse(readFileSync(secrets, 'utf8')).modules)).toContain('inventory');
    expect(readFileSync(rule, 'utf8')).toBe(readDemoRule());
    for (const d of [join(data, 'secrets'), dirname(rule)]) expect(readdirSync(d).filter((f) => f.includes('.tmp')), d).toEqual([]);
  });

  it('makes the data directory 0700: site.db (PIN hashes a 4-digit space makes quick to try), journal.db and logs are the site user\'s only', async () => {
    // Under the usual umask (022) a directory made with the default mode is readable by every local user.
    const data = join(dir, 'new', 'd');
    await initDataDir({ data, site: 'private', admin: { name: 'ada', pin: '4711' }, scrypt: { N: 1024, r: 8, p: 1 } });
    expect(statSync(data).mode & 0o777).toBe(0o700);
    // The first-run screen makes it the same way (FirstRunBackend → initDataDir).
    const fresh = join(dir, 'first');
    await new FirstRunBackend(fresh).call('initSite', { siteId: 'first', adminName: 'ada', adminPin: '4711' }, { user: null, setUser: () => undefined });
    expect(statSync(fresh).mode & 0o777).toBe(0o700);
  });

  it('writes module passwords once, 0600 in a 0700 folder, and keeps only scrypt hashes in site.db', async () => {
    const data = join(dir, 'd');
    await initDataDir({ data, site: 's1', admin: { name: 'admin', pin: '123456' } });
    expect(statSync(join(data, 'secrets')).mode & 0o777).toBe(0o700);
    expect(statSync(join(data, 'secrets', 'modules.json')).mode & 0o777).toBe(0o600);
    const secrets = JSON.parse(readFileSync(join(data, 'secrets', 'modules.json'), 'utf8'));
    expect(Object.keys(secrets.modules).sort()).toEqual(['commerce', 'inventory', 'operations', 'procurement', 'tilstand']);

    const db = new Database(join(data, 'site.db'));
    try {
      db.pragma('wal_checkpoint(TRUNCATE)');
      const hashes = db.prepare('SELECT password_hash FROM broker_credentials').pluck().all() as string[];
      expect(hashes).toHaveLength(5);
      for (const h of hashes) expect(h).toMatch(/^scrypt\$32768\$8\$1\$[A-Za-z0-9+/=]{24}\$/);
      expect(new Set(hashes.map((h) => h.split('$')[4])).size).toBe(5); // a salt per hash
      const creds = new ModuleCredentials(db);
      expect(await creds.verify('inventory', secrets.modules.inventory.password)).toEqual({ name: 'inventory', kind: 'module', module: 'inventory' });
      expect(await creds.verify('tilstand', secrets.modules.tilstand.password)).toEqual({ name: 'tilstand', kind: 'tilstand' });
      expect(await creds.verify('inventory', secrets.modules.commerce.password)).toBeNull();
    } finally {
      db.close();
    }
    const bytes = ['site.db', 'site.db-wal'].filter((f) => existsSync(join(data, f))).map((f) => readFileSync(join(data, f)).toString('latin1')).join('');
    for (const m of Object.values(secrets.modules) as { password: string }[]) expect(bytes).not.toContain(m.password);
    expect(bytes).not.toContain('123456');
  });

  it('runs again after an init stopped once the admin was in site.db, with the PIN given the second time', async () => {
    const data = join(dir, 'd');
    const o = { data, site: 'oslo-1', admin: { name: 'kari', pin: '4711' }, scrypt: { N: 1024, r: 8, p: 1 } };
    // An interruption after the admin was added, before the secrets and config.json: the
    // secrets file cannot be written (a folder in its place).
    mkdirSync(join(data, 'secrets', 'modules.json'), { recursive: true });
    await expect(initDataDir(o)).rejects.toThrow(/EISDIR/);
    rmSync(join(data, 'secrets', 'modules.json'), { recursive: true });
    await initDataDir({ ...o, admin: { name: 'kari', pin: '5820' } }); // was: user 'kari' already exists
    expect(readConfig(data).site).toBe('oslo-1');
    const db = new Database(join(data, 'site.db'));
    try {
      const users = new UserStore(db, { scrypt: { N: 1024, r: 8, p: 1 } });
      expect(await users.verifyPin('kari', '5820')).toMatchObject({ ok: true, user: { role: 'admin' } });
    } finally {
      db.close();
    }
  });

  it('refuses another admin name after an init stopped once its admin was in site.db, naming that admin', async () => {
    const data = join(dir, 'd');
    const scrypt = { N: 1024, r: 8, p: 1 };
    // Stopped after the admin was added (the secrets file cannot be written: a folder in its place).
    mkdirSync(join(data, 'secrets', 'modules.json'), { recursive: true });
    await expect(initDataDir({ data, site: 'oslo-1', admin: { name: 'kari', pin: '4711' }, scrypt })).rejects.toThrow(/EISDIR/);
    rmSync(join(data, 'secrets', 'modules.json'), { recursive: true });
    const admins = () => {
      const db = new Database(join(data, 'site.db'));
      try {
        return new UserStore(db, { scrypt }).list().filter((u) => u.role === 'admin').map((u) => u.name);
      } finally {
        db.close();
      }
    };
    // Run again under another name: it added a second admin, and the site had two.
    const other = await cli(['init', '--data', data, '--site', 'oslo-1', '--admin', 'ola', '--pin', '5820']);
    expect(other.code).toBe(3);
    expect(other.err).toContain(`option '--admin': an earlier init of ${data} that did not finish added the admin 'kari'`);
    expect(other.err).toContain('run it again with that admin name (the PIN given now is taken)');
    expect(existsSync(join(data, 'config.json'))).toBe(false);
    expect(admins()).toEqual(['kari']);
    // The first-run screen is told the same.
    await expect(new FirstRunBackend(data).call('initSite', { siteId: 'oslo-1', adminName: 'ola', adminPin: '5820' }, { user: null, setUser: () => undefined })).rejects.toThrow(/added the admin 'kari'/);
    // Under that name it finishes, with the one admin.
    const same = await cli(['init', '--data', data, '--site', 'oslo-1', '--admin', 'kari', '--pin', '5820']);
    expect(same.code).toBe(0);
    expect(same.out).toContain('  admin user: kari\n');
    expect(admins()).toEqual(['kari']);
  });

  it('names the admin an init that stopped had added when run again without --admin', async () => {
    const data = join(dir, 'd');
    mkdirSync(join(data, 'secrets', 'modules.json'), { recursive: true });
    await expect(initDataDir({ data, site: 'oslo-1', admin: { name: 'kari', pin: '4711' }, scrypt: { N: 1024, r: 8, p: 1 } })).rejects.toThrow(/EISDIR/);
    rmSync(join(data, 'secrets', 'modules.json'), { recursive: true });
    const r = await cli(['init', '--data', data, '--site', 'oslo-1']);
    expect(r.code).toBe(0);
    // It said "no admin user yet".
    expect(r.out).toContain('  admin user: kari (added by an earlier init of this directory that did not finish, with the PIN given then)\n');
  });

  it('refuses a bad site id or admin name, and a directory that is already a site', async () => {
    for (const site of ['../up', 'a/b', 'a..b', 'x\u0007']) {
      const r = await cli(['init', '--data', join(dir, 'x'), '--site', site]);
      expect(r.code, site).toBe(2);
      expect(r.err).toMatch(/^tilstand: option '--site': site id .*(slash|'\.\.'|control characters)/);
    }
    const easy = await cli(['init', '--data', join(dir, 'x'), '--site', 'ok', '--admin', 'root', '--pin', '1234']);
    expect(easy.code).toBe(2);
    expect(easy.err).toMatch(/option '--pin': PIN 1234: digits in a row is among the first a colleague would try/);
    const bad = await cli(['init', '--data', join(dir, 'x'), '--site', 'ok', '--admin', '../root', '--pin', '4711']);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/option '--admin': admin name "..\/root": must not contain a slash/);
    expect(existsSync(join(dir, 'x', 'config.json'))).toBe(false);
    expect((await cli(['init', '--data', join(dir, 'y'), '--site', 'ok'])).code).toBe(0);
    const weak = await cli(['users', 'add', '--data', join(dir, 'y'), '--name', 'Lena', '--role', 'shift_lead', '--pin', '0000']);
    expect(weak.code).toBe(2);
    expect(weak.err).toMatch(/PIN 0000: one digit repeated/);
    expect((await cli(['users', 'add', '--data', join(dir, 'y'), '--name', 'Lena', '--role', 'shift_lead', '--pin', '0451'])).code).toBe(0);
    const again = await cli(['init', '--data', join(dir, 'y'), '--site', 'ok']);
    expect(again.code).toBe(3);
    expect(again.err).toMatch(/already a Tilstand data directory/);
  });

  it('initializes a restored directory only under the restored site id (a replacement PC after `tilstand restore`)', async () => {
    // A site that shipped its state to a directory "HQ".
    const old = join(dir, 'old');
    await initDataDir({ data: old, site: 'north', scrypt: { N: 1024, r: 8, p: 1 } });
    const stock = new Catalog(join(old, 'warehouse')).getTable({ database: 'site_north', table: 'stock' });
    const w = stock.newWriter();
    w.writeRecord({ item: 'ITEM-1', location: 'A-01', on_hand: 7, inventory_seq: 3n });
    w.commit({ 'tilstand.hwm.inventory/stock': '3' });
    w.close();
    const hq = join(dir, 'hq');
    expect((await cli(['sync', 'now', '--data', old, '--hq', hq])).code).toBe(0);
    const fresh = join(dir, 'fresh');
    const restored = await cli(['restore', '--data', fresh, '--hq', hq, '--site', 'north']);
    expect(restored.code, restored.err).toBe(0);
    // The first-run screen is told which site the directory holds.
    const session = { user: null, setUser: () => undefined };
    expect(await new FirstRunBackend(fresh).call('firstRun', {}, session)).toEqual({ initialized: false, siteId: null, restoredSite: 'north' });
    // Another id would start an empty site beside the restored one.
    const wrong = await cli(['init', '--data', fresh, '--site', 'south', '--admin', 'ada', '--pin', '2468']);
    expect(wrong.code).toBe(2);
    expect(wrong.err).toContain("holds a restore of site 'north' (restore-note.json): initialize it with site id 'north'");
    expect(existsSync(join(fresh, 'config.json'))).toBe(false);
    expect(existsSync(join(fresh, 'warehouse', 'site_south.db'))).toBe(false);
    // The warehouse alone says so too (no note: restored by hand, or the note removed).
    rmSync(join(fresh, 'restore-note.json'));
    const bare = await cli(['init', '--data', fresh, '--site', 'south']);
    expect(bare.code).toBe(2);
    expect(bare.err).toMatch(/already holds the tables of site 'north': initialize it with that site id/);
    // The restored id is accepted, and the restored tables stay.
    const right = await cli(['init', '--data', fresh, '--site', 'north', '--admin', 'ada', '--pin', '2468']);
    expect(right.code, right.err).toBe(0);
    expect(readConfig(fresh).site).toBe('north');
    const back = new Catalog(join(fresh, 'warehouse')).getTable({ database: 'site_north', table: 'stock' }).scanRows();
    expect(back.map((r) => r.slice(0, 3))).toEqual([['ITEM-1', 'A-01', 7]]);
  });
});

