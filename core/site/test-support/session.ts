// A session as a transport keeps one for its client (the UI server per cookie, Electron per
// window), in memory: tests of the site API call `site.service.call(method, req, session())`.

import type { SessionContext, SessionUser } from '../api.ts';

/** `source`: where its calls come from, as a transport names it (the client's address, the window). */
export function session(source?: string): SessionContext {
  let user: SessionUser | null = null;
  return {
    ...(source !== undefined ? { source } : {}),
    get user() {
      return user;
    },
    setUser: (u) => void (user = u),
  };
}
