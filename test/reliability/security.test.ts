// Security suite, against a real site (Site.start in process, ephemeral ports): the headless
// server's API refuses calls without a session (except /metrics), cross-site requests, deciding
// with a role that may not decide; repeated wrong PINs lock the user; every listener binds to
// loopback and the control socket is 0600; the broker's ACLs refuse what a module must not do and
// clients without credentials; IPC payloads that do not match the contract are refused.

import { readFileSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import mqtt from 'mqtt';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { UserStore } from '../../core/inbox/users.ts';
import { Site } from '../../core/site/site.ts';
import { handleCall } from '../../electron/ipc.ts';
import { LONG, removeTempDirs, tempDir, writeSummary } from './lib/common.ts';
import { CHEAP_SCRYPT, makeSiteDir } from './lib/site-harness.ts';

const started = Date.now();
const checks: Record<string, number> = {};
const ok = (k: string) => (checks[k] = (checks[k] ?? 0) + 1);
let failures = 0;
let site: Site | undefined;
afterAll(async () => {
  await site?.stop();
  writeSummary({ suite: 'security', proves: 'no session/wrong role/cross-site/rebound host refused, PIN lockout, loopback listeners and a 0600 control socket, MQTT ACLs and credentials, IPC contract validation', seed: 0, trials: Object.values(checks).reduce((a, b) => a + b, 0), faultsInjected: 0, inputsTried: Object.values(checks).reduce((a, b) => a + b, 0), lost: 0, durationMs: Date.now() - started, details: { ...checks, long: LONG }, passed: failures === 0 });
  removeTempDirs();
});

const t = (name: string, f: () => Promise<void>) =>
  it(name, async () => {
    try {
      await f();
    } catch (e) {
      failures++;
      throw e;
    }
  }, 60_000);

describe('security: a running site', () => {
  let http = '';
  let data = '';
  let secrets: Record<string, { username: string; password: string }> = {};
  const api = async (method: string, body: unknown, o: { cookie?: string; headers?: Record<string, string> } = {}) => {
    const host = new URL(http).host;
    const res = await fetch(`${http}/api/${method}`, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Tilstand': '1', Origin: `http://${host}`, ...(o.cookie ? { Cookie: o.cookie } : {}), ...o.headers }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json().catch(() => null)) as { ok: boolean; error?: { kind: string } } | null, cookie: res.headers.get('set-cookie')?.split(';')[0] };
  };

  t('starts with users of each role', async () => {
    data = tempDir('security');
    const s = await makeSiteDir(data, 'sec');
    secrets = s.secrets;
    const db = new Database(join(data, 'site.db'));
    const users = new UserStore(db, { scrypt: CHEAP_SCRYPT });
    await users.add({ name: 'viewer1', role: 'viewer', pin: '1111' });
    await users.add({ name: 'lead1', role: 'shift_lead', pin: '2222' });
    await users.add({ name: 'victim', role: 'operator', pin: '3333' });
    db.close();
    site = await Site.start({ data, mqttPort: 0, httpPort: 0 });
    http = site.httpUrl;
    expect(http).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  t('API calls without a session are refused (except signIn/me); /metrics answers', async () => {
    for (const m of ['decide', 'status', 'users', 'listProposals', 'addUser']) {
      const r = await api(m, m === 'decide' ? { id: 'p-1', decision: 'approve' } : {});
      expect(r.status, m).toBe(401);
      ok('noSessionRefused');
    }
    expect((await fetch(`${http}/metrics`)).status).toBe(200);
    ok('metricsOpen');
  });

  t('cross-site requests are refused', async () => {
    const host = new URL(http).host;
    for (const headers of [{ 'X-Tilstand': '' }, { Origin: 'http://evil.example' }, { 'Content-Type': 'text/plain' }, { Origin: `http://${host}.evil.example` }] as Record<string, string>[]) {
      const r = await api('signIn', { user: 'lead1', secret: '2222' }, { headers });
      expect(r.status, JSON.stringify(headers)).toBe(403);
      ok('crossSiteRefused');
    }
    const get = await fetch(`${http}/api/status`);
    expect(get.status).toBe(405);
  });

  t('a page of another name rebound to 127.0.0.1 is refused (DNS rebinding), though its Origin matches its Host', async () => {
    const port = Number(new URL(http).port);
    for (const name of ['evil.example', `127.0.0.1.evil.example`]) {
      const host = `${name}:${port}`;
      const status = await new Promise<number>((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: '/api/signIn', method: 'POST', headers: { Host: host, Origin: `http://${host}`, 'X-Tilstand': '1', 'Content-Type': 'application/json' } });
        req.on('response', (res) => (res.resume(), resolve(res.statusCode!)));
        req.on('error', reject);
        req.end(JSON.stringify({ user: 'lead1', secret: '2222' }));
      });
      expect(status, host).toBe(421);
      ok('reboundHostRefused');
    }
  });

  t('deciding with a role that may not decide is refused', async () => {
    const v = await api('signIn', { user: 'viewer1', secret: '1111' });
    expect(v.status).toBe(200);
    const r = await api('decide', { id: 'p-x', decision: 'approve' }, { cookie: v.cookie! });
    expect(r.status).toBe(403);
    expect(r.body?.error?.kind).toBe('forbidden');
    ok('wrongRoleRefused');
  });

  t('repeated wrong PINs lock the user, even for the right PIN afterwards', async () => {
    let last;
    for (let i = 0; i < 5; i++) last = await api('signIn', { user: 'victim', secret: '0000' });
    expect(last!.status).not.toBe(200);
    const right = await api('signIn', { user: 'victim', secret: '3333' });
    expect(right.body?.ok, JSON.stringify(right.body)).toBe(false);
    expect(JSON.stringify(right.body)).toMatch(/lock/i);
    ok('lockout');
  });

  t('listeners bind to loopback; the control socket is 0600', async () => {
    const hex = (readFileSync('/proc/net/tcp', 'utf8') + readFileSync('/proc/net/tcp6', 'utf8')).split('\n').slice(1).filter((l) => l.trim().split(/\s+/)[3] === '0A');
    const ports = [new URL(site!.mqttUrl).port, new URL(http).port].map(Number);
    for (const port of ports) {
      const lines = hex.filter((l) => parseInt(l.trim().split(/\s+/)[1]!.split(':')[1]!, 16) === port);
      expect(lines.length, `listener on ${port}`).toBeGreaterThan(0);
      for (const l of lines) expect(['0100007F', '00000000000000000000000001000000'], `listener ${port} bound to ${l}`).toContain(l.trim().split(/\s+/)[1]!.split(':')[0]);
      ok('loopbackListener');
    }
    expect(statSync(join(data, 'control.sock')).mode & 0o777).toBe(0o600);
    ok('controlSocket0600');
  });

  t('MQTT: no credentials, wrong password refused; a module cannot publish commands or another module\'s events', async () => {
    const url = site!.mqttUrl;
    for (const o of [{}, { username: 'inventory', password: 'wrong' }]) {
      await expect(mqtt.connectAsync(url, { ...o, reconnectPeriod: 0, connectTimeout: 5000 })).rejects.toThrow();
      ok('unauthenticatedRefused');
    }
    const before = site!.status().broker;
    const refusedBefore = before.mode === 'embedded' ? before.metrics!.publishRefused : 0;
    for (const topic of ['tilstand/sec/commands/operations', 'tilstand/sec/events/commerce/reservations', 'tilstand/sec/resync/inventory', 'tilstand/other/events/inventory/stock']) {
      const c = await mqtt.connectAsync(url, { username: 'inventory', password: secrets.inventory!.password, reconnectPeriod: 0 });
      const closed = new Promise<void>((r) => c.once('close', () => r()));
      c.publish(topic, '{}', { qos: 1 }, () => undefined);
      await closed; // a refused publish disconnects the client without PUBACK
      c.end(true);
      ok('aclRefused');
    }
    const after = site!.status().broker;
    expect(after.mode === 'embedded' ? after.metrics!.publishRefused - refusedBefore : 0).toBe(4);
  });

  t('IPC payloads that do not match the contract are refused', async () => {
    const calls: unknown[] = [];
    const backend = { call: async (...a: unknown[]) => (calls.push(a), 'called'), subscribe: () => () => undefined } as never;
    const session = { user: null, setUser: () => undefined } as never;
    const app = 'app://tilstand/index.html';
    const bad: [unknown, unknown][] = [
      ['nope', {}],
      ['decide', { id: 'p', decision: 'delete' }],
      ['decide', { id: 'p', decision: 'approve', extra: 1 }],
      ['decide', JSON.parse('{"id":"p","decision":"approve","__proto__":{"admin":true}}')],
      ['signIn', { user: '../etc', secret: '1' }],
      ['stock', { limit: 'all' }],
      ['tags', { table: '../x' }],
      [{ toString: () => 'status' }, {}],
    ];
    for (const [m, req] of bad) {
      const r = await handleCall(backend, session, app, m, req);
      expect(r.ok, JSON.stringify([String(m), req])).toBe(false);
      ok('ipcRefused');
    }
    expect((await handleCall(backend, session, 'https://evil.example/', 'status', {})).ok).toBe(false);
    expect(calls).toEqual([]);
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });
});
