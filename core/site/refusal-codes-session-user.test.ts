// The refusals a floor user meets beyond sign-in carry a code and params beside their English
// message (api.ts RefusalCode), so the floor UI can say them in nb and de: why the backend ended a
// session (`session.ended`, `session.required`), the user store's refusals (core/inbox users.ts
// UserError, `user.*`) and config.json refusing a reorder point (`reorder.levels`,
// `config.refused`). Through the real SiteService over a demo site, as the transports send them.
import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UserError, UserStore } from '../inbox/index.ts';
import type { ApiErrorBody, SessionContext } from './api.ts';
import { session } from './test-support/session.ts';
import { SiteApiError } from './api.ts';
import { demoConfig } from './demo/site.ts';
import { initDataDir } from './init.ts';
import { SiteService } from './service.ts';
import { DEMO_ADMIN, Site } from './site.ts';

let dir: string;
let data: string;
let site: Site;

/** The error body a call's refusal crosses the transport as. */
async function refused(p: Promise<unknown>): Promise<ApiErrorBody> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(SiteApiError);
    return (e as SiteApiError).body();
  }
  throw new Error('expected the call to be refused, it went through');
}

async function signedIn(name: string, secret: string, api = site.service): Promise<SessionContext> {
  const s = session();
  await api.call('signIn', { user: name, secret }, s);
  return s;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-refusal-session-user-'));
  data = join(dir, 'data');
  await initDataDir({ data, site: 'demo', config: (c) => demoConfig(c), admin: DEMO_ADMIN });
  site = await Site.start({ data, demo: true, mqttPort: 0, httpPort: 0, demoStepMs: 600_000, agentTimer: false, ui: false });
  for (const [name, pin] of [['Olav', '1357'], ['Kari', '2468'], ['Ruth', '3579'], ['Lena', '2580']] as const) await site.users.add({ name, role: 'operator', pin });
}, 60_000);

afterAll(async () => {
  await site?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('session.ended: why the backend ended a session', () => {
  it('says the user was disabled, locked or removed since the sign-in, or their PIN reset', async () => {
    const api = site.service;
    const olav = await signedIn('Olav', '1357');
    site.users.disable('Olav');
    const disabled = await refused(api.call('status', {}, olav));
    expect(disabled).toMatchObject({ kind: 'unauthenticated', code: 'session.ended', params: { user: 'Olav', why: 'disabled' } });
    expect(disabled.message).toBe('user Olav can no longer sign in (disabled); sign in again');

    const kari = await signedIn('Kari', '2468');
    // Wrong PINs from elsewhere lock her (bounded: the store's lockout comes within ten).
    for (let i = 0; i < 10 && site.users.get('Kari')!.lockedUntilMs === null; i++) await site.users.verifyPin('Kari', '9999');
    expect(site.users.get('Kari')!.lockedUntilMs).not.toBeNull();
    expect(await refused(api.call('status', {}, kari))).toMatchObject({ code: 'session.ended', params: { user: 'Kari', why: 'locked' } });

    const ruth = await signedIn('Ruth', '3579');
    await site.users.resetSecret('Ruth', { pin: '3571' });
    const reset = await refused(api.call('status', {}, ruth));
    expect(reset).toMatchObject({ code: 'session.ended', params: { user: 'Ruth', why: 'secretReset' } });
    expect(reset.message).toBe('the PIN or password of Ruth was reset after this sign-in; sign in again');

    // A session naming a user site.db no longer has (removed by hand from site.db).
    const ghost = session();
    ghost.setUser({ name: 'Ghost', roles: ['viewer'] });
    expect(await refused(api.call('status', {}, ghost))).toMatchObject({ code: 'session.ended', params: { user: 'Ghost', why: 'removed' } });
    // And then, as for any call without a user: sign in first.
    expect(await refused(api.call('status', {}, ghost))).toMatchObject({ kind: 'unauthenticated', message: 'sign in first', code: 'session.required' });
  });

  it('says an idle sign-out with the limit, once', async () => {
    // A service of its own on a clock of its own, never started (as service.test.ts does).
    let t = Date.now();
    const api = new SiteService(site, { now: () => t });
    const idle = site.config.ui.idleSignOutMs;
    const s = await signedIn('Lena', '2580', api);
    t += idle + 1_000;
    const why = await refused(api.call('me', {}, s, null));
    expect(why).toMatchObject({ kind: 'unauthenticated', idleMs: idle, code: 'session.ended', params: { user: 'Lena', why: 'idle', idleMs: idle } });
    expect(why.message).toBe(`Lena was signed out after ${idle / 60_000} min without use of the screen; sign in again`);
    expect(await refused(api.call('status', {}, s, 0))).toMatchObject({ message: 'sign in first', code: 'session.required' });
  });
});

describe("user.*: the user store's refusals", () => {
  it('at addUser, resetSecret, disableUser, enableUser and setRoles, with the kind they had', async () => {
    const api = site.service;
    const admin = await signedIn(DEMO_ADMIN.name, DEMO_ADMIN.pin);
    const short = await refused(api.call('addUser', { name: 'Nils', roles: ['operator'], secret: 'abc' }, admin));
    expect(short).toEqual({ kind: 'invalid', message: 'password: expected 8 to 256 characters', code: 'user.passwordLength', params: { min: 8, max: 256 } });
    expect(await refused(api.call('addUser', { name: 'Nils', roles: ['operator'], secret: '5820', badge: 'ab' }, admin))).toEqual({
      kind: 'invalid',
      message: 'badge: expected 4 to 256 characters',
      code: 'user.badgeLength',
      params: { min: 4, max: 256 },
    });
    await api.call('addUser', { name: 'Nils', roles: ['operator'], secret: '5820', badge: 'card-0042' }, admin);
    expect(await refused(api.call('addUser', { name: 'Nora', roles: ['operator'], secret: '5821', badge: 'card-0042' }, admin))).toEqual({
      kind: 'conflict',
      message: 'that badge already belongs to another user',
      code: 'user.badgeTaken',
    });
    expect(await refused(api.call('addUser', { name: 'Nils', roles: ['viewer'], secret: '5821' }, admin))).toMatchObject({ kind: 'conflict', code: 'user.exists', params: { name: 'Nils' } });
    expect(await refused(api.call('addUser', { name: 'a..b', roles: ['viewer'], secret: '5821' }, admin))).toMatchObject({ kind: 'invalid', code: 'user.nameInvalid', params: { name: 'a..b' } });
    for (const call of [
      api.call('disableUser', { name: 'Nobody' }, admin),
      api.call('enableUser', { name: 'Nobody' }, admin),
      api.call('resetSecret', { name: 'Nobody', secret: '5821' }, admin),
      api.call('setRoles', { name: 'Nobody', roles: ['viewer'] }, admin),
    ]) {
      expect(await refused(call)).toEqual({ kind: 'not_found', message: "user 'Nobody' does not exist", code: 'user.notFound', params: { name: 'Nobody' } });
    }
    expect(await refused(api.call('resetSecret', { name: 'Nils', secret: 'short' }, admin))).toMatchObject({ kind: 'invalid', code: 'user.passwordLength', params: { min: 8, max: 256 } });
  });

  it('each refusal of what a person gives carries its code in the store itself; its own options do not', async () => {
    const db = new Database(':memory:');
    const store = new UserStore(db, { scrypt: { N: 1 << 10, r: 8, p: 1 } });
    await store.add({ name: 'Nils', role: 'viewer', pin: '5820' });
    const codeOf = async (p: Promise<unknown> | (() => unknown)): Promise<unknown> => {
      try {
        await (typeof p === 'function' ? p() : p);
      } catch (e) {
        expect(e).toBeInstanceOf(UserError);
        return (e as UserError).refusal;
      }
      throw new Error('expected a UserError');
    };
    expect(await codeOf(store.add({ name: 'Pia', role: 'viewer' }))).toEqual({ code: 'user.noSecret', params: { name: 'Pia' } });
    expect(await codeOf(store.add({ name: 'Pia', role: 'boss' as never, pin: '5821' }))).toEqual({ code: 'user.roleInvalid', params: { role: 'boss' } });
    expect(await codeOf(store.add({ name: 'Pia', role: 'viewer', pin: '12' }))).toEqual({ code: 'user.pinInvalid', params: { min: 4, max: 12 } });
    expect(await codeOf(store.resetSecret('Nils', { pin: '1x34' }))).toEqual({ code: 'user.pinInvalid', params: { min: 4, max: 12 } });
    expect(await codeOf(() => store.setRole('Nils', 'boss' as never))).toEqual({ code: 'user.roleInvalid', params: { role: 'boss' } });
    expect(await codeOf(() => new UserStore(db, { failuresMax: 0 }))).toBeUndefined();
    db.close();
  });
});

describe('reorder.levels and config.refused: config.json refusing a reorder point', () => {
  it('names the item (and location) and the levels, or the key of the file that does not validate', async () => {
    const api = site.service;
    const lead = session();
    await site.users.add({ name: 'Siv', role: 'shift_lead', pin: '4826' });
    await api.call('signIn', { user: 'Siv', secret: '4826' }, lead);
    expect(await refused(api.call('setReorderPolicy', { item: 'BOLT', policy: { reorderPoint: 50, orderUpTo: 10 } }, lead))).toEqual({
      kind: 'invalid',
      message: 'config agent.reorderByItem.BOLT: expected orderUpTo > reorderPoint, got 10 ≤ 50',
      code: 'reorder.levels',
      params: { item: 'BOLT', reorderPoint: 50, orderUpTo: 10 },
    });
    expect(await refused(api.call('setReorderPolicy', { item: 'BOLT', location: 'A-01', policy: { reorderPoint: 7, orderUpTo: 7 } }, lead))).toMatchObject({
      kind: 'invalid',
      code: 'reorder.levels',
      params: { item: 'BOLT', location: 'A-01', reorderPoint: 7, orderUpTo: 7 },
    });
    // An item and a location with a dot (their record's key quotes them; config.json's refusal names them dotted).
    expect(await refused(api.call('setReorderPolicy', { item: 'BOLT.M8', location: 'A.01', policy: { reorderPoint: 7, orderUpTo: 7 } }, lead))).toMatchObject({
      kind: 'invalid',
      code: 'reorder.levels',
      params: { item: 'BOLT.M8', location: 'A.01', reorderPoint: 7, orderUpTo: 7 },
    });
    // A hand edit left another item's levels wrong: the change is refused naming that key.
    const path = join(data, 'config.json');
    expect(existsSync(path)).toBe(true);
    const before = readFileSync(path, 'utf8');
    const raw = JSON.parse(before) as { agent?: { reorderByItem?: Record<string, unknown> } };
    raw.agent = { ...raw.agent, reorderByItem: { ...raw.agent?.reorderByItem, NUT: { reorderPoint: 5, orderUpTo: 2 } } };
    writeFileSync(path, JSON.stringify(raw));
    try {
      expect(await refused(api.call('setReorderPolicy', { item: 'BOLT', policy: { reorderPoint: 5, orderUpTo: 20 } }, lead))).toMatchObject({
        kind: 'invalid',
        code: 'config.refused',
        params: { key: 'agent.reorderByItem.NUT' },
      });
    } finally {
      writeFileSync(path, before);
    }
  });

  it('says config.file when config.json is JSON but no object ([] or 3), and leaves the file as it was', async () => {
    const api = site.service;
    const lead = session();
    await site.users.add({ name: 'Tor', role: 'shift_lead', pin: '3816' });
    await api.call('signIn', { user: 'Tor', secret: '3816' }, lead);
    const path = join(data, 'config.json');
    const before = readFileSync(path, 'utf8');
    try {
      for (const text of ['[]\n', '3\n']) {
        writeFileSync(path, text);
        const body = await refused(api.call('setReorderPolicy', { item: 'BOLT', policy: { reorderPoint: 5, orderUpTo: 20 } }, lead));
        // The English message (logs, the CLI) as config.ts says it; the code for the floor UI.
        expect(body).toEqual({ kind: 'invalid', message: expect.stringMatching(/config\.json: expected a JSON object, got (an array|3)$/), code: 'config.file' });
        expect(readFileSync(path, 'utf8')).toBe(text);
      }
    } finally {
      writeFileSync(path, before);
    }
  });
});
