// Counts said to people in the singular for one: "(1 attempts left)" at a sign-in and a dismissal,
// "1 steps pending" in `tilstand status` (the sync_stalled alarm's "1 step waiting" is in
// sync-stall-reason.test.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Ingestor } from '../ingest/ingestor.ts';
import { UserStore } from '../inbox/users.ts';
import { EMPTY_SYNC_STATUS } from '../sync/engine.ts';
import { progressText } from './cli/site-commands.ts';
import { dismissWithPin } from './dismiss.ts';
import { session } from './test-support/session.ts';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';
import { formatStatus, syncView } from './status.ts';

let dir: string;
const closers: (() => unknown)[] = [];
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-singular-'));
});
afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
  rmSync(dir, { recursive: true, force: true });
});

describe('one of a count is said in the singular', () => {
  it('a sign-in with a wrong PIN: "(1 attempt left)" before the lockout', async () => {
    const data = join(dir, 'si');
    await initDataDir({ data, site: 'si', admin: { name: 'Olav', pin: '1357' } });
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    closers.push(() => site.stop());
    const said: string[] = [];
    // Five wrong PINs lock the user: the fourth leaves one.
    for (let k = 0; k < 4; k++) said.push(((await site.service.call('signIn', { user: 'Olav', secret: '8642' }, session()).catch((e: unknown) => e)) as Error).message);
    expect(said[2]).toBe('sign-in refused: wrong name, PIN or password (2 attempts left)');
    expect(said[3]).toBe('sign-in refused: wrong name, PIN or password (1 attempt left)');
  }, 30_000);

  it('a dismissal with a wrong PIN: "(1 attempt left)"', async () => {
    const db = new Database(join(dir, 'site.db'));
    closers.push(() => db.close());
    const users = new UserStore(db, { scrypt: { N: 1 << 10, r: 8, p: 1 }, failuresMax: 2, lockoutMs: 60_000 });
    await users.add({ name: 'lena', role: 'shift_lead', pin: '1111' });
    // The PIN is checked before the ingestor is used: a refused one never reaches it.
    const noIngestor = {} as Ingestor;
    await expect(dismissWithPin(users, noIngestor, { ids: [1n], user: 'lena', pin: '9999', note: 'test' })).rejects.toThrow("dismiss refused for user 'lena': wrong PIN (1 attempt left)");
  });

  it('`tilstand status`: "1 step pending", "2 steps pending"', () => {
    const status = (pendingItems: number) =>
      formatStatus({
        site: 'demo', data: '/d', running: false, pid: null, startedAtMs: null, nowMs: Date.UTC(2026, 11, 1),
        broker: { mode: 'embedded', url: null, host: '127.0.0.1', port: null, metrics: null }, http: { url: null },
        tables: [], deadLettersOpen: 0,
        journal: { lastPosition: '0', committedPosition: '0', uncommittedEvents: '0', oldestUncommittedMs: null, bytesUsed: 0 },
        ingestFailure: null, diskFull: null, demo: null, streams: null, alarms: null, restoreWaiting: null, proposals: null,
        sync: syncView('/mnt/hq', 15 * 60_000, { ...EMPTY_SYNC_STATUS, healthy: true, pendingItems }),
      }).find((l) => l.startsWith('sync: '));
    expect(status(1)).toMatch(/^sync: to \/mnt\/hq, OFFLINE, 1 step pending/);
    expect(status(2)).toMatch(/^sync: to \/mnt\/hq, OFFLINE, 2 steps pending/);
  });

  it("a dismissal's or replay's progress: \"1 of 1 letter\", \"1 of 2 letters\"", () => {
    expect(progressText({ done: 1, total: 1 })).toBe('; 1 of 1 letter');
    expect(progressText({ done: 1, total: 2, failed: 1 })).toBe('; 1 of 2 letters, 1 still failing');
  });
});
