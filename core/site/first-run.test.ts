// SwitchingBackend (Electron's first run): after the switch, the site's own answer to signedIn
// decides whether the window gets events, as it does for a site started directly.
import { describe, expect, it } from 'vitest';
import type { SessionContext, SessionUser, SiteBackend } from './api.ts';
import { SwitchingBackend } from './first-run.ts';

function session(user: SessionUser | null): SessionContext {
  return { user, setUser: () => undefined };
}

const backend = (o: Partial<SiteBackend> = {}): SiteBackend => ({
  call: () => Promise.reject(new Error('not used')),
  subscribe: () => () => undefined,
  ...o,
});

describe('SwitchingBackend', () => {
  it('asks its current target whether a session is still signed in, else whether it has a user', () => {
    const kari = session({ name: 'Kari', roles: ['shift_lead'] });
    const s = new SwitchingBackend(backend());
    expect(s.signedIn(kari)).toBe(true);
    expect(s.signedIn(session(null))).toBe(false);
    s.switchTo(backend({ signedIn: (x) => x.user?.name !== 'Kari' }));
    expect(s.signedIn(kari)).toBe(false);
  });
});
