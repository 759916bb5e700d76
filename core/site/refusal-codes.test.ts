// The refusals a floor user meets most carry a stable code and params beside their English message
// (api.ts ApiErrorBody `code`, RefusalCode), so the floor UI can say them in nb and de. Through the
// real SiteService over a demo site, as the transports send them (`SiteApiError.body()`).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiErrorBody, SessionContext } from './api.ts';
import { session } from './test-support/session.ts';
import { SiteApiError } from './api.ts';
import { demoConfig } from './demo/site.ts';
import { initDataDir } from './init.ts';
import { DEMO_ADMIN, Site } from './site.ts';
import { FirstRunBackend } from './first-run.ts';

let dir: string;
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

async function signedIn(name: string, secret: string): Promise<SessionContext> {
  const s = session();
  await site.service.call('signIn', { user: name, secret }, s);
  return s;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-refusal-codes-'));
  await initDataDir({ data: join(dir, 'data'), site: 'demo', config: (c) => demoConfig(c), admin: DEMO_ADMIN });
  site = await Site.start({ data: join(dir, 'data'), demo: true, mqttPort: 0, httpPort: 0, demoStepMs: 600_000, agentTimer: false, ui: false });
  await site.users.add({ name: 'Olav', role: 'operator', pin: '1357' });
  await site.users.add({ name: 'Lena', role: 'shift_lead', pin: '2580' });
  await site.users.add({ name: 'Gone', role: 'viewer', pin: '4826' });
  site.users.disable('Gone');
  // Bounded wait (200 × 100 ms) for the demo modules' first work queue, for the agent's proposals.
  for (let i = 0; i < 200; i++) {
    site.ingestor.commitAll();
    if (site.catalog.getTable({ database: 'site_demo', table: 'work_queue' }).scanRows().length >= 30) break;
    await new Promise((r) => setTimeout(r, 100));
  }
}, 60_000);

afterAll(async () => {
  await site?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('refusal codes', () => {
  it('sign-in: wrong PIN with the attempts left, then locked until, disabled, unknown badge', async () => {
    const api = site.service;
    await site.users.add({ name: 'Unlucky', role: 'viewer', pin: '4739' });
    const s = session();
    const first = await refused(api.call('signIn', { user: 'Unlucky', secret: '9182' }, s));
    expect(first).toMatchObject({ kind: 'unauthenticated', code: 'signin.wrong', params: { left: expect.any(Number) } });
    expect(first.message).toMatch(/^sign-in refused: wrong name, PIN or password/);
    let last = first;
    for (let i = 0; i < 10 && last.code !== 'signin.locked'; i++) last = await refused(api.call('signIn', { user: 'Unlucky', secret: '9182' }, s));
    expect(last).toMatchObject({ kind: 'unauthenticated', code: 'signin.locked', params: { untilMs: expect.any(Number) } });
    expect(last.params!.untilMs as number).toBeGreaterThan(Date.now());
    expect(await refused(api.call('signIn', { user: 'Gone', secret: '4826' }, s))).toMatchObject({ code: 'signin.disabled', message: 'sign-in refused: this user is disabled' });
    expect(await refused(api.call('signIn', { badge: 'no-such-badge' }, s))).toMatchObject({ kind: 'unauthenticated', code: 'signin.badgeUnknown' });
  });

  it('a role that may not: who, as what, and which roles may', async () => {
    const op = await signedIn('Olav', '1357');
    const b = await refused(site.service.call('decide', { id: 'P-x', decision: 'reject' }, op));
    expect(b).toEqual({ kind: 'forbidden', message: 'Olav is operator; only a shift lead or an admin decides', code: 'role.refused', params: { user: 'Olav', role: 'operator', allowed: 'shift_lead,admin' } });
    expect((await refused(site.service.call('users', {}, op))).params).toEqual({ user: 'Olav', role: 'operator', allowed: 'admin' });
  });

  it('users: a guessable PIN at add and reset, a name taken, oneself disabled or demoted', async () => {
    const api = site.service;
    const admin = await signedIn(DEMO_ADMIN.name, DEMO_ADMIN.pin);
    const repeated = await refused(api.call('addUser', { name: 'Easy', roles: ['operator'], secret: '1111' }, admin));
    expect(repeated).toMatchObject({ kind: 'invalid', code: 'pin.guessable', params: { pin: '1111', why: 'repeated' } });
    expect(repeated.message).toMatch(/^secret: PIN 1111: one digit repeated is among the first a colleague would try/);
    expect(await refused(api.call('resetSecret', { name: 'Olav', secret: '6543' }, admin))).toMatchObject({ kind: 'invalid', code: 'pin.guessable', params: { pin: '6543', why: 'sequence' } });
    const taken = await refused(api.call('addUser', { name: 'Olav', roles: ['viewer'], secret: '5820' }, admin));
    expect(taken).toEqual({ kind: 'conflict', message: "user 'Olav' already exists", code: 'user.exists', params: { name: 'Olav' } });
    expect(await refused(api.call('disableUser', { name: DEMO_ADMIN.name }, admin))).toMatchObject({ kind: 'conflict', code: 'user.selfDisable' });
    expect(await refused(api.call('setRoles', { name: DEMO_ADMIN.name, roles: ['viewer'] }, admin))).toMatchObject({ kind: 'conflict', code: 'user.selfDemote' });
    // Oneself by another spelling the store finds one by: an admin "Åse" named as A + U+030A.
    await api.call('addUser', { name: '\u00C5se', roles: ['admin'], secret: '5820' }, admin);
    const ase = await signedIn('\u00C5se', '5820');
    expect(await refused(api.call('disableUser', { name: 'A\u030Ase' }, ase))).toMatchObject({ kind: 'conflict', code: 'user.selfDisable' });
    expect(await refused(api.call('setRoles', { name: 'A\u030Ase', roles: ['viewer'] }, ase))).toMatchObject({ kind: 'conflict', code: 'user.selfDemote' });
    expect(site.users.get('\u00C5se')).toMatchObject({ role: 'admin', disabled: false });
  });

  it('proposals: one that does not exist, one decided already', async () => {
    const api = site.service;
    const lead = await signedIn('Lena', '2580');
    expect(await refused(api.call('getProposal', { id: 'P-none' }, lead))).toEqual({ kind: 'not_found', message: 'proposal P-none does not exist', code: 'proposal.notFound', params: { id: 'P-none' } });
    expect(await refused(api.call('decide', { id: 'P-none', decision: 'reject' }, lead))).toMatchObject({ kind: 'not_found', code: 'proposal.notFound', params: { id: 'P-none' } });
    site.runAgent();
    const open = await api.call('listProposals', { status: ['open'] }, lead);
    expect(open.length).toBeGreaterThan(0);
    const id = open[0]!.id;
    expect((await api.call('decide', { id, decision: 'reject' }, lead)).outcome).toBe('rejected');
    const again = await refused(api.call('decide', { id, decision: 'approve' }, lead));
    expect(again).toMatchObject({ kind: 'conflict', code: 'proposal.notOpen', params: { id, status: 'rejected' } });
    expect(again.message).toMatch(new RegExp(`^proposal ${id} is rejected .*only open or deferred proposals can be decided$`));
  });

  it('the first run: a guessable first admin PIN', async () => {
    const fresh = new FirstRunBackend(join(dir, 'fresh'));
    const b = await refused(fresh.call('initSite', { siteId: 'osl1', adminName: 'Ada', adminPin: '9876' }, session()));
    expect(b).toMatchObject({ kind: 'invalid', code: 'pin.guessable', params: { pin: '9876', why: 'sequence' } });
    expect(b.message).toMatch(/^adminPin: PIN 9876: digits in a row is among the first/);
  });

  it('a refusal without a code crosses as before: kind and message only', async () => {
    // ("sign in first" has a code since: session.required, refusal-codes-session-user.test.ts.)
    const admin = await signedIn(DEMO_ADMIN.name, DEMO_ADMIN.pin);
    expect(await refused(site.service.call('addUser', { name: 'Two', roles: ['viewer', 'admin'], secret: '5820' }, admin))).toEqual({
      kind: 'invalid',
      message: 'roles: a user has exactly one role (viewer, operator, shift_lead or admin), got 2',
    });
  });
});
