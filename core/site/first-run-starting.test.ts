// The first-run backend, once the directory is set up, answers `starting`: it serves only until
// the site it hands over to runs, and the page waits for the site's own answer (without it) before
// it offers the sign-in (renderer FirstRunStarting.test.ts; cli/main.test.ts sees the site answer).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FirstRunBackend } from './first-run.ts';

const dir = mkdtempSync(join(tmpdir(), 'first-run-starting-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the first-run backend, once set up', () => {
  it('answers the setup and every read after it as starting, not as the running site', async () => {
    const b = new FirstRunBackend(join(dir, 'data'));
    const session = { user: null, setUser: () => undefined };
    expect(await b.call('firstRun', {}, session)).toEqual({ initialized: false, siteId: null, restoredSite: null });
    expect(await b.call('initSite', { siteId: 'north', adminName: 'kari', adminPin: '4817' }, session)).toEqual({ initialized: true, siteId: 'north', restoredSite: null, starting: true });
    expect(await b.call('firstRun', {}, session)).toEqual({ initialized: true, siteId: 'north', restoredSite: null, starting: true });
  });
});
