// `tilstand init` run again on a directory without config.json whose site.db is not empty: two
// admins an old init left (it took each name it was run with), and a site that ran and lost its
// config.json. On real directories and a real site.db.

import Database from 'better-sqlite3';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UserStore } from '../inbox/users.ts';
import { runMain as cli } from './cli/test-support.ts';
import { FirstRunBackend } from './first-run.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';

const FAST = { N: 1024, r: 8, p: 1 };

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-init-rerun-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function withUsers<T>(data: string, f: (users: UserStore, db: Database.Database) => T | Promise<T>): Promise<T> {
  const db = new Database(join(data, 'site.db'));
  try {
    return await f(new UserStore(db, { scrypt: FAST }), db);
  } finally {
    db.close();
  }
}

/** A directory as the old init bug left it: an init stopped after its admin, and a second admin from a run under another name. */
async function twoAdminsLeft(data: string): Promise<void> {
  mkdirSync(join(data, 'secrets', 'modules.json'), { recursive: true });
  await expect(initDataDir({ data, site: 'oslo-1', admin: { name: 'kari', pin: '4711' }, scrypt: FAST })).rejects.toThrow(/EISDIR/);
  // The old init added the second name beside the first, and stopped the same way.
  await withUsers(data, (users) => users.add({ name: 'ola', role: 'admin', pin: '5820' }));
  rmSync(join(data, 'secrets', 'modules.json'), { recursive: true });
}

describe('init run again', () => {
  for (const chosen of ['kari', 'ola']) {
    it(`finishes on a directory an old init left with two admins, under either name (${chosen}), with that one admin`, async () => {
      const data = join(dir, chosen);
      await twoAdminsLeft(data);
      const r = await cli(['init', '--data', data, '--site', 'oslo-1', '--admin', chosen, '--pin', '9137']);
      expect(r.err).toBe('');
      expect(r.code).toBe(0);
      expect(r.out).toContain(`  admin user: ${chosen}\n`);
      expect(existsSync(join(data, 'config.json'))).toBe(true);
      // Nobody ever signed in as the other (no config.json: the site never started): it is gone.
      await withUsers(data, async (users) => {
        expect(users.list().map((u) => u.name)).toEqual([chosen]);
        expect(await users.verifyPin(chosen, '9137')).toMatchObject({ ok: true, user: { role: 'admin' } });
      });
    });
  }

  it('says config.json is missing from a site that ran, not that an init did not finish, and changes nothing', async () => {
    const data = join(dir, 'ran');
    await initDataDir({ data, site: 'oslo-1', admin: { name: 'kari', pin: '4711' }, scrypt: FAST, config: (c) => ({ ...c, broker: { ...c.broker, port: 0 } as typeof c.broker }) });
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    await site.stop();
    rmSync(join(data, 'config.json'));
    const secrets = readFileSync(join(data, 'secrets', 'modules.json'), 'utf8');
    const hashes = () => withUsers(data, (_u, db) => db.prepare('SELECT * FROM broker_credentials ORDER BY 1').all());
    const before = await hashes();

    for (const admin of ['ola', 'kari']) {
      const r = await cli(['init', '--data', data, '--site', 'oslo-1', '--admin', admin, '--pin', '9137']);
      expect(r.code, admin).toBe(3);
      expect(r.err).not.toMatch(/did not finish/);
      expect(r.err).toContain(`${data} has no config.json, but its site.db is that of a site that has started here`);
      expect(r.err).toContain('put config.json back from a backup');
    }
    // The first-run screen words it by its code (renderer i18n, refusal.init.configLost).
    await expect(new FirstRunBackend(data).call('initSite', { siteId: 'oslo-1', adminName: 'ola', adminPin: '9137' }, { user: null, setUser: () => undefined })).rejects.toThrow(
      expect.objectContaining({ message: expect.stringMatching(/has no config\.json, but its site\.db is that of a site that has started here/), refusal: { code: 'init.configLost' } }),
    );
    // Nothing was replaced: the modules' passwords, the admin's PIN, no config.json.
    expect(existsSync(join(data, 'config.json'))).toBe(false);
    expect(readFileSync(join(data, 'secrets', 'modules.json'), 'utf8')).toBe(secrets);
    expect(await hashes()).toEqual(before);
    await withUsers(data, async (users) => {
      expect(users.list().map((u) => u.name)).toEqual(['kari']);
      expect(await users.verifyPin('kari', '4711')).toMatchObject({ ok: true });
    });
  }, 60_000);
});
