// Sign-ins on the headless server hash one at a time: each costs a scrypt hash, a name that is no
// user too, so a client without credentials that sent sign-ins side by side under ever new names
// kept every threadpool thread of the site PC hashing. Against the real UiServer on loopback with a
// backend whose sign-in takes a while; the gate's turns between sources on the class itself.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { SiteApiError, type SiteBackend } from './api.ts';
import { SignInGate, UiServer } from './ui-server.ts';

let server: Server | undefined;
let ui: UiServer | undefined;
const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
afterEach(async () => {
  ui?.close();
  await new Promise<void>((r) => (server ? (server.close(() => r()), server.closeAllConnections()) : r()));
  server = undefined;
});

/**
 * A UiServer whose backend's sign-in takes a while (as a PIN's scrypt does): until `open()`, then
 * 20 ms each; it counts how many run at once.
 */
async function start() {
  const dir = mkdtempSync(join(tmpdir(), 'ui-gate-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>x</title>');
  const seen = { running: 0, most: 0, signIns: 0 };
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  const backend: SiteBackend = {
    async call(method, req, session) {
      if (method !== 'signIn') return null as never;
      seen.signIns++;
      seen.running++;
      seen.most = Math.max(seen.most, seen.running);
      try {
        await opened;
        await new Promise((r) => setTimeout(r, 20));
        const r = req as { user: string; secret: string };
        if (r.secret !== '2580') throw new SiteApiError('unauthenticated', 'sign-in refused: wrong name, PIN or password');
        session.setUser({ name: r.user, roles: ['operator'] });
        return session.user as never;
      } finally {
        seen.running--;
      }
    },
    subscribe: () => () => undefined,
  };
  ui = new UiServer(backend, { rendererDir: dir, secure: false });
  server = createServer((req, res) => {
    if (!ui!.handle(req, res)) res.writeHead(404).end();
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, open };
}

const signIn = (base: string, user: string, secret: string) =>
  fetch(`${base}/api/signIn`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Tilstand': '1' },
    body: JSON.stringify({ user, secret }),
    signal: AbortSignal.timeout(10_000),
  });

describe('sign-ins on the headless server', () => {
  it('are checked one at a time; past four waiting from one source the next is refused with 429, and the gate opens again', async () => {
    const { base, seen, open } = await start();
    // Twelve side by side under names that are no user's (each would cost a hash), as a flood would.
    // The backend's first sign-in holds until the refusals are in (bounded: 100 × 50 ms), so which
    // requests wait does not depend on how fast they arrive.
    let answered = 0;
    const pending = Array.from({ length: 12 }, (_, i) => signIn(base, `nobody${i}`, '0000').then((r) => (answered++, r)));
    for (let i = 0; i < 100 && answered < 7 && seen.most <= 1; i++) await new Promise((r) => setTimeout(r, 50));
    open();
    const answers = await Promise.all(pending);
    const bodies = (await Promise.all(answers.map((r) => r.json()))) as Array<{ ok: boolean; error: { kind: string; message: string } }>;
    expect(seen.most, 'sign-ins the backend ran at once').toBe(1);
    const refused = answers.filter((r) => r.status === 429).length;
    // One running and four waiting were checked (401: no such user); the other seven were refused unhashed.
    expect(answers.filter((r) => r.status === 401).length).toBe(5);
    expect(refused).toBe(7);
    expect(seen.signIns).toBe(5);
    for (const [i, b] of bodies.entries()) {
      expect(b.ok).toBe(false);
      expect(b.error.kind).toBe('unauthenticated');
      if (answers[i]!.status === 429) expect(b.error.message).toMatch(/^sign-in refused: too many sign-ins from here at once/);
    }
    // Every turn was given back (failed sign-ins included): the right PIN signs in now.
    const ok = await signIn(base, 'kari', '2580');
    expect(ok.status).toBe(200);
    expect(ok.headers.get('set-cookie')).toMatch(/^tilstand_session=/);
    expect(ui!.sessionCount()).toBe(1);
  });
});

describe('SignInGate', () => {
  it('gives the sources waiting their turns in rotation, so one pile does not hold another source back', async () => {
    const gate = new SignInGate(1, 3, 5);
    const order: string[] = [];
    expect(await gate.enter('a')).toBe(true); // runs at once
    const turns = [
      ...['a', 'a', 'a'].map((s) => gate.enter(s).then((ok) => (ok ? order.push(s) : order.push(`${s} refused`)))),
      gate.enter('b').then((ok) => (ok ? order.push('b') : order.push('b refused'))),
      gate.enter('c').then((ok) => (ok ? order.push('c') : order.push('c refused'))),
    ];
    // Five waiting at most: a sixth is refused at once.
    expect(await gate.enter('d')).toBe(false);
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setImmediate(r));
      gate.leave();
    }
    await Promise.all(turns);
    expect(order).toEqual(['a', 'b', 'c', 'a', 'a']);
  });

  it('refuses past the per-source and the overall bound without waiting', async () => {
    const gate = new SignInGate(1, 2, 3);
    expect(await gate.enter('x')).toBe(true);
    const waiting = [gate.enter('x'), gate.enter('x'), gate.enter('y')];
    expect(await gate.enter('x'), 'a third waiting from x').toBe(false);
    expect(await gate.enter('z'), 'a fourth waiting overall').toBe(false);
    for (let i = 0; i < 4; i++) gate.leave();
    expect(await Promise.all(waiting)).toEqual([true, true, true]);
    // All turns given back: the next runs at once.
    expect(await gate.enter('z')).toBe(true);
  });
});
