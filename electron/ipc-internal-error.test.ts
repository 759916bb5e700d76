// The IPC answer to a failure that is no SiteApiError: a generic text with an error id, never the
// error's text (a path of the data directory); the log (handleCall's `log`, stderr without one)
// has the whole error under the id. The first-run backend is the case: initSite before a site
// exists, by a window nobody has signed in at.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SessionContext, SessionUser } from '../core/site/api.ts';
import { FirstRunBackend } from '../core/site/first-run.ts';
import { handleCall } from './ipc.ts';

const GENERIC = /^internal error \(id ([0-9a-f]{8})\); the site's log \(logs\/site\.log\) has the details under that id$/;
const APP = 'tilstand://app/index.html';
const INIT = { siteId: 'north', adminName: 'kari', adminPin: '4817' };

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  vi.restoreAllMocks();
});

function session(user: SessionUser | null = null): SessionContext {
  let u = user;
  return {
    get user() {
      return u;
    },
    setUser: (next) => void (u = next),
  };
}

/** A data directory that cannot be made: its parent is a file (ENOTDIR, naming the path). */
function unmakeableData(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ipc-internal-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'not-a-directory'), 'x');
  return join(dir, 'not-a-directory', 'data');
}

describe('handleCall: a failure that is no SiteApiError', () => {
  it("answers an id, not the file system's error naming the data directory; the log gets it whole", async () => {
    const data = unmakeableData();
    const log: string[] = [];
    const r = await handleCall(new FirstRunBackend(data), session(), APP, 'initSite', INIT, null, (l) => void log.push(l));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.error.kind).toBe('internal');
    expect(r.error.message).toMatch(GENERIC);
    expect(r.error.message).not.toContain('not-a-directory');
    const id = GENERIC.exec(r.error.message)![1]!;
    expect(log).toHaveLength(1);
    expect(log[0]).toMatch(new RegExp(`^internal error ${id} in initSite \\(not signed in\\): .*ENOTDIR`));
    expect(log[0]).toContain(data);
  });

  it('names the signed-in user and a thrown non-Error in the log line', async () => {
    const log: string[] = [];
    const backend = { call: async () => Promise.reject(null), subscribe: () => () => undefined };
    const r = await handleCall(backend, session({ name: 'kari', roles: ['admin'] }), APP, 'status', {}, null, (l) => void log.push(l));
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const id = GENERIC.exec(r.error.message)![1]!;
    expect(log).toEqual([`internal error ${id} in status (user kari): null`]);
  });

  it('writes to stderr when given no log', async () => {
    const data = unmakeableData();
    const written: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => (written.push(String(chunk)), true));
    const r = await handleCall(new FirstRunBackend(data), session(), APP, 'initSite', INIT, null);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    const id = GENERIC.exec(r.error.message)![1]!;
    const line = written.find((w) => w.startsWith(`internal error ${id} in initSite`));
    expect(line).toContain(data);
  });
});
