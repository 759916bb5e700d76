// What a signed-in session may do follows the user as site.db has them now, over the real headless
// server (a running Site on loopback): a shift lead an admin demotes is refused `decide` at the very
// next call (not at the session's end), and a user name written in another case or with a space is
// no way around the lockout — it is no user (it signs nobody in and locks nobody out).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';

let dir: string;
let site: Site;
let base = '';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-authority-'));
  const data = join(dir, 'data');
  // Cheap scrypt: the test signs in a few dozen times.
  await initDataDir({
    data,
    site: 'auth',
    scrypt: { N: 1 << 10, r: 8, p: 1 },
    admin: { name: 'boss', pin: '246810' },
    config: (c) => ({ ...c, broker: { ...c.broker, port: 0 } as typeof c.broker, http: { ...c.http, port: 0 } }),
  });
  site = await Site.start({ data, mqttPort: 0, httpPort: 0, agentTimer: false });
  await site.users.add({ name: 'lena', role: 'shift_lead', pin: '2580' });
  await site.users.add({ name: 'olav', role: 'operator', pin: '1357' });
  base = site.httpUrl;
}, 60_000);

afterAll(async () => {
  await site?.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function api(method: string, body: unknown, cookie?: string): Promise<{ status: number; body: { ok: boolean; value?: unknown; error?: { kind: string; message: string; code?: string } }; cookie?: string }> {
  const res = await fetch(`${base}/api/${method}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Tilstand': '1', Origin: base, ...(cookie ? { Cookie: cookie } : {}) },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: res.status, body: (await res.json()) as never, cookie: res.headers.get('set-cookie')?.split(';')[0] };
}

async function signIn(user: string, secret: string): Promise<string> {
  const r = await api('signIn', { user, secret });
  expect(r.status, JSON.stringify(r.body)).toBe(200);
  return r.cookie!;
}

describe('session authority on a running site', () => {
  it('refuses a demoted shift lead at the next decide, with the role they have now', async () => {
    const admin = await signIn('boss', '246810');
    const lena = await signIn('lena', '2580');
    // As a shift lead the call passes the role check (the proposal is simply not there).
    const before = await api('decide', { id: 'p-none', decision: 'approve' }, lena);
    expect(before.body.error?.kind, JSON.stringify(before.body)).not.toBe('forbidden');
    expect((await api('setRoles', { name: 'lena', roles: ['operator'] }, admin)).status).toBe(200);
    const after = await api('decide', { id: 'p-none', decision: 'approve' }, lena);
    expect(after.status).toBe(403);
    // With the refusal's code and params, for the floor UI to word it (api.ts RefusalCode).
    expect(after.body.error).toEqual({
      kind: 'forbidden',
      message: 'lena is operator; only a shift lead or an admin decides',
      code: 'role.refused',
      params: { user: 'lena', role: 'operator', allowed: 'shift_lead,admin' },
    });
    expect((await api('me', {}, lena)).body.value).toEqual({ name: 'lena', roles: ['operator'] });
    // The same for the other decider-only methods, and admin-only ones for a demoted admin.
    expect((await api('dismissDeadLetters', { ids: ['0'], note: 'x' }, lena)).status).toBe(403);
    expect((await api('setRoles', { name: 'lena', roles: ['shift_lead'] }, admin)).status).toBe(200);
    expect((await api('decide', { id: 'p-none', decision: 'approve' }, lena)).body.error?.kind).not.toBe('forbidden');
  });

  it('takes a name in another case as no user, and one with a space around it as no name: it neither signs in nor locks the user out', async () => {
    for (const other of ['OLAV', 'Olav']) {
      const right = await api('signIn', { user: other, secret: '1357' });
      expect(right.status, other).toBe(401);
      expect(right.cookie, other).toBeUndefined();
      for (let i = 0; i < 5; i++) await api('signIn', { user: other, secret: '9999' });
    }
    // A space before or after is no name at all (the user store's rule, api-validate.ts): refused
    // as invalid before any check, so it counts against nobody.
    for (const spaced of [' olav', 'olav ']) {
      for (let i = 0; i < 5; i++) expect((await api('signIn', { user: spaced, secret: '9999' })).status).toBe(400);
      expect((await api('signIn', { user: spaced, secret: '1357' })).body.error?.code).toBe('input.name');
    }
    // Ten wrong PINs under those names: olav is not locked, and signs in.
    await signIn('olav', '1357');
    // Five wrong under his own name lock him, whatever is tried under the others afterwards.
    for (let i = 0; i < 5; i++) await api('signIn', { user: 'olav', secret: '9999' });
    const locked = await api('signIn', { user: 'olav', secret: '1357' });
    expect(locked.body.error?.message).toMatch(/^sign-in refused: locked until/);
    expect((await api('signIn', { user: 'OLAV', secret: '1357' })).status).toBe(401);
  });
});
