// Site.stop while API calls are in flight across an await (a PIN being hashed, a user being added):
// they finish before site.db closes — answered as they would have been, nothing half-done left (the
// sign-in's attempt, counted before the hash, is taken back) — and their log lines come before
// "site stopped"; a call that comes once the stop has begun is refused as `conflict`, "the site is
// stopping", never `internal`.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import type { SessionContext, SessionUser } from './api.ts';
import { controlRequest } from './control.ts';
import { initDataDir } from './init.ts';
import { SiteService } from './service.ts';
import { Site } from './site.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-stop-busy-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function session(): SessionContext {
  const s: SessionContext = {
    user: null,
    setUser: (u: SessionUser | null) => {
      s.user = u;
    },
  };
  return s;
}

const settle = <T>(p: Promise<T>) => p.then((value) => ({ ok: true as const, value }), (error: { kind?: string; message?: string }) => ({ ok: false as const, error }));

it('lets calls in flight at stop finish before site.db closes, and refuses the ones that come after', { timeout: 60_000 }, async () => {
  const data = join(dir, 'data');
  // The site's own (slow) scrypt: the hashes are still running when stop begins.
  await initDataDir({ data, site: 'busy', admin: { name: 'boss', pin: '246810' } });
  const lines: string[] = [];
  const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false, log: (l) => lines.push(l) });
  const admin = session();
  await site.service.call('signIn', { user: 'boss', secret: '246810' }, admin);

  const signIn = settle(site.service.call('signIn', { user: 'boss', secret: '246810' }, session()));
  const addUser = settle(site.service.call('addUser', { name: 'lena', roles: ['shift_lead'], secret: '2580' }, admin));
  const stopped = site.stop();
  const after = settle(site.service.call('status', {}, admin));
  await stopped;

  const [a, b, c] = await Promise.all([signIn, addUser, after]);
  expect(a).toMatchObject({ ok: true, value: { name: 'boss' } });
  expect(b).toMatchObject({ ok: true, value: { name: 'lena' } });
  expect(c).toMatchObject({ ok: false, error: { kind: 'conflict' } });
  expect(c.ok === false && c.error.message).toMatch(/the site is stopping/);
  // Nothing half-done: the sign-in's attempt was taken back, the user added is there.
  const db = new Database(join(data, 'site.db'), { readonly: true });
  try {
    expect(db.prepare('SELECT failed_attempts FROM users WHERE name = ?').pluck().get('boss')).toBe(0);
    expect(db.prepare('SELECT count(*) FROM users WHERE name = ?').pluck().get('lena')).toBe(1);
  } finally {
    db.close();
  }
  expect(lines.at(-1)).toBe('site stopped');
  expect(lines.some((l) => /internal error/.test(l))).toBe(false);
  expect(readFileSync(join(data, 'logs', 'site.log'), 'utf8').trimEnd().split('\n').at(-1)).toMatch(/site stopped$/);
});

// The wait is bounded: a call stuck past it does not hold the stop, and when it fails on the closed
// site.db it is answered that the site stopped, not as an internal error (SiteService over a
// stand-in of the Site, whose PIN check never ends until the test lets it fail).
it('stops without a call stuck past the bound, and answers it that the site stopped', async () => {
  let fail!: (e: Error) => void;
  const log: string[] = [];
  const standIn = {
    config: { site: 'north', ui: { idleSignOutMs: 0 } },
    users: {
      get: () => ({ name: 'boss', hasPin: true }),
      verifyPin: () => new Promise((_r, reject) => (fail = reject)),
    },
    logLine: (l: string) => void log.push(l),
  };
  const api = new SiteService(standIn as unknown as Site);
  const signIn = settle(api.call('signIn', { user: 'boss', secret: '246810' }, session()));
  const started = performance.now();
  expect(await api.stop(50)).toBe(1);
  expect(performance.now() - started).toBeLessThan(5_000);
  expect(log).toEqual([expect.stringMatching(/^stop: 1 API call still running after 0\.05 s; the site stops without it/)]);
  fail(new TypeError('The database connection is not open'));
  const r = await signIn;
  expect(r).toMatchObject({ ok: false, error: { kind: 'conflict' } });
  expect(r.ok === false && r.error.message).toMatch(/the site stopped before this call finished/);
  expect(log).toHaveLength(1); // no internal error logged after the stop
});

// The control socket's ops that hash a PIN (`deadletters.dismiss`, `inbox.decide`) or otherwise
// work across an await: one in flight at stop is answered before the socket and site.db close.
it('answers a control op in flight at stop before closing, and refuses one that comes after', { timeout: 60_000 }, async () => {
  const data = join(dir, 'data');
  await initDataDir({ data, site: 'busy', admin: { name: 'boss', pin: '246810' } });
  const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
  const path = site.controlSocketPath!;
  const users = site.users;
  const verifyPin = users.verifyPin.bind(users);
  let entered!: () => void;
  const hashing = new Promise<void>((r) => (entered = r));
  users.verifyPin = (...a: Parameters<typeof verifyPin>) => (entered(), verifyPin(...a));
  const dismiss = settle(controlRequest(path, 'deadletters.dismiss', { ids: ['1'], user: 'boss', pin: '246810', note: 'test' }));
  await hashing;
  const stopped = site.stop();
  const after = settle(controlRequest(path, 'status'));
  await stopped;
  const [d, s] = await Promise.all([dismiss, after]);
  // The PIN's attempt, counted before its hash, was taken back: the check finished on an open site.db.
  const db = new Database(join(data, 'site.db'), { readonly: true });
  try {
    expect(db.prepare('SELECT failed_attempts FROM users WHERE name = ?').pluck().get('boss')).toBe(0);
  } finally {
    db.close();
  }
  // Answered (the slices after the PIN's check are not waited for, but these take a turn or two),
  // or, at worst, the connection closed: never a failure of a closed site.db.
  if (d.ok) expect(d.value).toMatchObject({ dismissed: 0, notOpen: ['1'] });
  else expect(d.error).toMatchObject({ kind: 'Disconnected' });
  expect(s).toMatchObject({ ok: false, error: { kind: 'Failed', message: 'the site is stopping; try again once it has started again' } });
});
