// A failure nobody foresaw tells the client a generic text with an error id, never the error's own
// text (a path in the data directory, a decoder's complaint, a stack fragment); the site's log has
// the whole error under the same id. Errors of the kinds the UI shows the person (InvalidArgument,
// NotFound, Conflict, a refusal, a config key) keep their message.
// SiteService runs over a stand-in of the Site (only what these calls touch); the HTTP answers
// come from the real UiServer and SiteHttpServer on loopback.

import { afterEach, describe, expect, it } from 'vitest';
import { SiteApiError, type SessionContext, type SessionUser } from './api.ts';
import { ConfigError } from './config.ts';
import { SiteHttpServer } from './http-server.ts';
import { InboxError, UserError } from '../inbox/index.ts';
import { LsmError } from '../lsm/index.ts';
import { SiteService } from './service.ts';
import type { Site } from './site.ts';
import { UiServer } from './ui-server.ts';

const LEAK = 'SQLITE_IOERR: disk I/O error reading /srv/tilstand/data/site.db (SELECT pin_hash FROM users)';
const GENERIC = /^internal error \(id ([0-9a-f]{8})\); the site's log \(logs\/site\.log\) has the details under that id$/;

/** A Site as far as sign-in and the session checks go: its user store fails with `failure`. */
function standInSite(failure: () => unknown) {
  const log: string[] = [];
  const site = {
    config: { site: 'north', ui: { idleSignOutMs: 0 } },
    users: {
      get: () => {
        throw failure();
      },
    },
    logLine: (line: string) => void log.push(line),
  };
  return { site: site as unknown as Site, log };
}

function session(user: SessionUser | null = null): SessionContext {
  let u = user;
  return {
    get user() {
      return u;
    },
    setUser: (next) => void (u = next),
  };
}

async function failureOf(p: Promise<unknown>): Promise<SiteApiError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(SiteApiError);
    return e as SiteApiError;
  }
  throw new Error('expected the call to fail');
}

let servers: Array<{ close(): Promise<void> | void }> = [];
afterEach(async () => {
  for (const s of servers.splice(0).reverse()) await s.close();
});

describe('internal errors in the site API', () => {
  it('answers a handler failure nobody foresaw with an id, and logs the whole error under it', async () => {
    const { site, log } = standInSite(() => new Error(LEAK));
    const api = new SiteService(site);
    const e = await failureOf(api.call('signIn', { user: 'Ada', secret: '1234' }, session()));
    expect(e.kind).toBe('internal');
    const id = GENERIC.exec(e.message)?.[1];
    expect(id, e.message).toBeDefined();
    expect(e.message).not.toContain('/srv');
    expect(JSON.stringify(e.body())).not.toContain('SQLITE');
    // One line, with the id, the method, the error's text and where it was thrown.
    expect(log).toHaveLength(1);
    expect(log[0]).toContain(`internal error ${id} in signIn (not signed in): Error: ${LEAK}`);
    expect(log[0]).toMatch(/ \| at /);
    expect(log[0]).not.toContain('\n');
  });

  it('does the same for a failure in the session checks before the handler (a signed-in call)', async () => {
    const { site, log } = standInSite(() => new Error(LEAK));
    const api = new SiteService(site);
    const e = await failureOf(api.call('users', {}, session({ name: 'Ada', roles: ['admin'] })));
    expect(e.kind).toBe('internal');
    const id = GENERIC.exec(e.message)?.[1];
    expect(id, e.message).toBeDefined();
    expect(log).toEqual([expect.stringContaining(`internal error ${id} in users (user Ada): Error: ${LEAK}`)]);
  });

  it('gives each failure an id of its own, and logs a cause chain', async () => {
    const { site, log } = standInSite(() => new Error('table read failed', { cause: new Error(LEAK) }));
    const api = new SiteService(site);
    const a = await failureOf(api.call('signIn', { user: 'Ada', secret: '1234' }, session()));
    const b = await failureOf(api.call('signIn', { user: 'Ada', secret: '1234' }, session()));
    expect(a.message).not.toBe(b.message);
    expect(log).toHaveLength(2);
    expect(log[0]).toContain(`caused by: Error: ${LEAK}`);
  });

  it('keeps the message of the kinds the UI shows the person, and logs none of them', async () => {
    const cases: Array<[unknown, string, string]> = [
      [new UserError('NotFound', 'name', 'no user named Ada'), 'not_found', 'no user named Ada'],
      [new UserError('InvalidArgument', 'pin', 'pin: expected 4 to 12 digits'), 'invalid', 'pin: expected 4 to 12 digits'],
      [new UserError('AlreadyExists', 'name', 'a user named Ada exists'), 'conflict', 'a user named Ada exists'],
      [new InboxError('Conflict', 'proposal p1 was decided by Lena meanwhile'), 'conflict', 'proposal p1 was decided by Lena meanwhile'],
      [new InboxError('Refused', 'Olav may not decide this', 'role'), 'forbidden', 'Olav may not decide this'],
      [new LsmError('InvalidArgument', 'snapshot id must be positive'), 'invalid', 'snapshot id must be positive'],
      [new LsmError('NotFound', 'no table stock'), 'not_found', 'no table stock'],
      [new ConfigError('agent.reorderByItem.A', 'expected a number'), 'invalid', 'config agent.reorderByItem.A: expected a number'],
      [new SiteApiError('forbidden', 'viewers cannot do this'), 'forbidden', 'viewers cannot do this'],
    ];
    for (const [thrown, kind, message] of cases) {
      const { site, log } = standInSite(() => thrown);
      const e = await failureOf(new SiteService(site).call('signIn', { user: 'Ada', secret: '1234' }, session()));
      expect({ kind: e.kind, message: e.message }, String(thrown)).toEqual({ kind, message });
      expect(log, String(thrown)).toEqual([]);
    }
  });

  it('treats an error of another kind (a corruption, an I/O error, a thrown non-error) as internal', async () => {
    for (const thrown of [new LsmError('Corruption', `corruption in /srv/tilstand/data/warehouse/x.parquet: bad footer`), new LsmError('IOError', 'EIO on /srv/x'), 'a string with /srv/x']) {
      const { site, log } = standInSite(() => thrown);
      const e = await failureOf(new SiteService(site).call('signIn', { user: 'Ada', secret: '1234' }, session()));
      expect(e.kind, String(thrown)).toBe('internal');
      expect(e.message, String(thrown)).toMatch(GENERIC);
      expect(log).toEqual([expect.stringContaining('/srv/')]);
    }
  });

  it('sends the browser the generic text over HTTP (UiServer on the site HTTP server)', async () => {
    const { site, log } = standInSite(() => new Error(LEAK));
    const ui = new UiServer(new SiteService(site), { rendererDir: '/nonexistent', secure: false });
    const http = new SiteHttpServer('127.0.0.1', 0, { metrics: () => '', health: () => ({ ok: true }), ui });
    servers.push({ close: () => ui.close() }, http);
    const port = await http.listen();
    const r = await fetch(`http://127.0.0.1:${port}/api/signIn`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Tilstand': '1' },
      body: JSON.stringify({ user: 'Ada', secret: '1234' }),
      signal: AbortSignal.timeout(10_000),
    });
    expect(r.status).toBe(500);
    const text = await r.text();
    expect(text).not.toContain('/srv');
    const body = JSON.parse(text) as { ok: false; error: { kind: string; message: string } };
    expect(body.error.kind).toBe('internal');
    const id = GENERIC.exec(body.error.message)?.[1];
    expect(id, body.error.message).toBeDefined();
    expect(log).toEqual([expect.stringContaining(`internal error ${id} in signIn`)]);
  });
});

describe('internal errors of /metrics and /healthz', () => {
  it('answers 500 with an id, unauthenticated callers learning nothing of the error, which goes to the log', async () => {
    const lines: string[] = [];
    const http = new SiteHttpServer('127.0.0.1', 0, {
      metrics: () => {
        throw new Error(`cannot stat /srv/tilstand/data/journal/000042.log: EIO`);
      },
      health: () => {
        throw new Error('site.db: SQLITE_CORRUPT');
      },
      log: (l) => void lines.push(l),
    });
    servers.push(http);
    const port = await http.listen();
    for (const [path, leak] of [
      ['/metrics', '/srv/tilstand'],
      ['/healthz', 'SQLITE_CORRUPT'],
    ] as const) {
      const r = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(10_000) });
      expect(r.status, path).toBe(500);
      const text = await r.text();
      expect(text, path).not.toContain(leak);
      const id = /^internal error \(id ([0-9a-f]{8})\)/.exec(text)?.[1];
      expect(id, text).toBeDefined();
      expect(lines.at(-1), path).toContain(`internal error ${id} in ${path}: Error: `);
      expect(lines.at(-1), path).toContain(leak);
    }
    expect(lines).toHaveLength(2);
  });
});

describe('a running site', () => {
  it('writes the whole error of a failing /metrics to logs/site.log under the id the caller got', async () => {
    const { mkdtempSync, readFileSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { Site: SiteClass } = await import('./site.ts');
    const dir = mkdtempSync(join(tmpdir(), 'tilstand-internal-log-'));
    const data = join(dir, 'data');
    const site = await SiteClass.start({ data, demo: true, mqttPort: 0, httpPort: 0, demoStepMs: 600_000, agentTimer: false });
    try {
      // The endpoint calls the Site's metrics(): made to fail as a damaged journal would.
      (site as unknown as { metrics: () => string }).metrics = () => {
        throw new Error(`${join(data, 'journal.db')}: disk I/O error`);
      };
      const res = await fetch(`${site.httpUrl}/metrics`);
      const text = await res.text();
      expect(res.status).toBe(500);
      expect(text).not.toContain('journal.db');
      const id = /\(id ([0-9a-f]{8})\)/.exec(text)?.[1];
      expect(id, text).toBeDefined();
      // Without the site's log given to the HTTP server the line went to stderr only.
      expect(readFileSync(join(data, 'logs', 'site.log'), 'utf8')).toMatch(new RegExp(`internal error ${id}.*journal\\.db: disk I/O error`));
    } finally {
      await site.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
