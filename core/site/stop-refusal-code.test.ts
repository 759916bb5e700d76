// The stopping site's refusals carry a refusal code (api.ts RefusalCode), so the floor UI says them
// in the reader's language: a call that comes once the stop has begun is `site.stopping`, one cut
// short by it (stuck past the wait, failing on the closed site.db) `site.stopped` — both `conflict`,
// the English message kept for logs, the CLI and older UIs. They carried no code, and the floor UI
// showed the English text in every language. (SiteService over a stand-in of the Site, as
// stop-while-busy.test.ts.)
import { expect, it } from 'vitest';
import { SiteApiError, type SessionContext, type SessionUser } from './api.ts';
import { SiteService } from './service.ts';
import type { Site } from './site.ts';

function session(): SessionContext {
  const s: SessionContext = {
    user: null,
    setUser: (u: SessionUser | null) => {
      s.user = u;
    },
  };
  return s;
}

const settle = <T>(p: Promise<T>) => p.then(() => null, (e: unknown) => e);

it('codes a call refused at stop as site.stopping, and one cut short as site.stopped', async () => {
  let fail!: (e: Error) => void;
  const standIn = {
    config: { site: 'north', ui: { idleSignOutMs: 0 } },
    users: {
      get: () => ({ name: 'boss', hasPin: true }),
      verifyPin: () => new Promise((_r, reject) => (fail = reject)),
    },
    logLine: () => {},
  };
  const api = new SiteService(standIn as unknown as Site);
  const stuck = settle(api.call('signIn', { user: 'boss', secret: '246810' }, session()));
  expect(await api.stop(20)).toBe(1);
  const after = await settle(api.call('firstRun', {}, session()));
  expect(after).toBeInstanceOf(SiteApiError);
  expect((after as SiteApiError).body()).toEqual({ kind: 'conflict', message: 'the site is stopping; try again once it has started again', code: 'site.stopping' });
  fail(new TypeError('The database connection is not open'));
  const cut = await stuck;
  expect(cut).toBeInstanceOf(SiteApiError);
  expect((cut as SiteApiError).body()).toEqual({ kind: 'conflict', message: 'the site stopped before this call finished; try again once it has started again', code: 'site.stopped' });
});
