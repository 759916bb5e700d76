// The users list the floor UI's Users screen shows (SiteService `users`, `addUser`): whether each
// user has a badge, never the badge — it is a secret like a PIN (core/inbox users.ts keeps only a
// salted hash of it), so what crosses the API could not carry it anyway, and must not try.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initDataDir } from './init.ts';
import { DEMO_ADMIN, Site } from './site.ts';
import { session } from './test-support/session.ts';

let dir: string;
let site: Site;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-user-view-badge-'));
  const data = join(dir, 'data');
  await initDataDir({ data, site: 's1', admin: DEMO_ADMIN, scrypt: { N: 1 << 10, r: 8, p: 1 } });
  site = await Site.start({ data, mqttPort: 0, httpPort: 0, agentTimer: false, ui: false });
}, 60_000);

afterAll(async () => {
  await site?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('UserView.hasBadge', () => {
  it('says whether a user has a badge, and never sends the badge', async () => {
    const api = site.service;
    const admin = session();
    await api.call('signIn', { user: DEMO_ADMIN.name, secret: DEMO_ADMIN.pin }, admin);
    expect(await api.call('addUser', { name: 'Per', roles: ['operator'], secret: '4725', badge: 'B-0042-XY' }, admin)).toMatchObject({ name: 'Per', hasBadge: true });
    await api.call('addUser', { name: 'Ola', roles: ['operator'], secret: '4726' }, admin);
    const list = await api.call('users', {}, admin);
    expect(Object.fromEntries(list.map((u) => [u.name, u.hasBadge]))).toEqual({ [DEMO_ADMIN.name]: false, Per: true, Ola: false });
    expect(JSON.stringify(list)).not.toContain('B-0042-XY');
    expect(Object.keys(list.find((u) => u.name === 'Per')!).sort()).toEqual(['disabled', 'hasBadge', 'lockedUntilMs', 'name', 'roles']);
  });
});
