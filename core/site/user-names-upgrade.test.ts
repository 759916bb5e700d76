// A site.db from an older version may hold user names the user store no longer takes for a new
// user ("anna\u200B", "\u202Eanna", "per\u00A0hansen": core/inbox users.ts nameProblem). After the
// upgrade those users still sign in, and an admin still disables, enables, resets and sets the
// roles of them; only a new name is held to the stricter rule. Through the site API's request check
// (api-validate.ts) and the real SiteService over a demo site, as the Electron IPC sends a call.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret } from '../inbox/secret-hash.ts';
import type { ApiErrorBody, SessionContext, SiteMethod, SiteApiMethods } from './api.ts';
import { session } from './test-support/session.ts';
import { SiteApiError } from './api.ts';
import { validateCall } from './api-validate.ts';
import { dataPaths } from './config.ts';
import { demoConfig } from './demo/site.ts';
import { initDataDir } from './init.ts';
import { openSiteDb } from './site-db.ts';
import { DEMO_ADMIN, Site } from './site.ts';

const FAST = { N: 1 << 10, r: 8, p: 1 }; // the hash's cost is not under test here
/** Names an older version took as typed, each with the PIN 4826. */
const OLD = ['anna\u200B', '\u202Eanna', 'per\u00A0hansen'];

let dir: string;
let site: Site;

/** A call as a transport makes it: checked at the boundary, then the service. */
async function call<M extends SiteMethod>(method: M, req: SiteApiMethods[M]['req'], s: SessionContext): Promise<SiteApiMethods[M]['res']> {
  const v = validateCall<M>(method, req);
  return site.service.call(v.method, v.req, s);
}

async function refused(p: () => Promise<unknown>): Promise<ApiErrorBody> {
  try {
    await p();
  } catch (e) {
    expect(e).toBeInstanceOf(SiteApiError);
    return (e as SiteApiError).body();
  }
  throw new Error('expected the call to be refused, it went through');
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-user-names-upgrade-'));
  const data = join(dir, 'data');
  await initDataDir({ data, site: 'demo', config: (c) => demoConfig(c), admin: DEMO_ADMIN });
  // The rows as the older UserStore wrote them, before this version opens site.db.
  const db = openSiteDb(dataPaths(data).siteDb);
  try {
    const pinHash = await hashSecret('4826', FAST);
    const insert = db.prepare("INSERT INTO users (name, role, pin_hash, created_at_ms) VALUES (?, 'operator', ?, 0)");
    for (const name of OLD) insert.run(name, pinHash);
  } finally {
    db.close();
  }
  site = await Site.start({ data, demo: true, mqttPort: 0, httpPort: 0, demoStepMs: 600_000, agentTimer: false, ui: false });
}, 60_000);

afterAll(async () => {
  await site?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('user names an older version took', () => {
  it.each(OLD)('%j signs in, and an admin disables, enables, resets and sets the roles of that user', async (name) => {
    const admin = session();
    await call('signIn', { user: DEMO_ADMIN.name, secret: DEMO_ADMIN.pin }, admin);
    const s = session();
    await call('signIn', { user: name, secret: '4826' }, s);
    expect(s.user?.name).toBe(name);
    expect((await call('me', {}, s))?.name).toBe(name);
    expect((await call('users', {}, admin)).map((u) => u.name)).toContain(name);

    expect(await call('disableUser', { name }, admin)).toMatchObject({ name, disabled: true });
    expect(await refused(() => call('signIn', { user: name, secret: '4826' }, session()))).toMatchObject({ code: 'signin.disabled' });
    expect(await call('enableUser', { name }, admin)).toMatchObject({ name, disabled: false });
    expect(await call('setRoles', { name, roles: ['shift_lead'] }, admin)).toMatchObject({ name });
    await call('resetSecret', { name, secret: '5937' }, admin);
    const again = session();
    await call('signIn', { user: name, secret: '5937' }, again);
    expect(again.user?.name).toBe(name);
  });

  it('are refused as the name of a new user, and so is a name that looks like one of them', async () => {
    const admin = session();
    await call('signIn', { user: DEMO_ADMIN.name, secret: DEMO_ADMIN.pin }, admin);
    expect(await refused(() => call('addUser', { name: 'ola\u200B', roles: ['operator'], secret: '5937' }, admin))).toMatchObject({
      kind: 'invalid',
      code: 'input.name',
      params: { field: 'name' },
    });
    const like = await refused(() => call('addUser', { name: 'Per Hansen', roles: ['operator'], secret: '5937' }, admin));
    expect(like).toMatchObject({ kind: 'conflict', code: 'user.exists', params: { name: 'per\u00A0hansen' } });
    expect(like.message).toContain("looks like the existing user 'per<U+00A0>hansen'");
  });
});
