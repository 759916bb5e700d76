// The site ended the session without an error: `me` answers null for a session an admin disabled,
// a removed or locked user's, or one signed out in another tab (core/site service `me` catches
// them; only an idle sign-out is said as an error). The page finds that out by its 30 s check or
// when the events socket closes (4401). That is the end of a session as a sign-out is: what the
// person saw leaves the store, and a reply asked during that session no longer applies. Before,
// only `user` went null: the rest stayed, and a read still on its way put its rows in afterwards.
import { describe, expect, it } from 'vitest';
import type { SiteApi, UserView } from '../../../core/site/api.ts';
import { createAppStore } from './store.ts';

function deferred<T>(): { promise: Promise<T>; resolve(v: T): void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('a session the site ended (me answers null)', () => {
  it("clears what the person saw, and a read of that session answered later stays out", async () => {
    let me: { name: string; roles: string[] } | null = { name: 'Ada', roles: ['admin'] };
    const users = deferred<UserView[]>();
    const api = new Proxy({} as SiteApi, {
      get(_t, method: string) {
        return async () => {
          if (method === 'signIn') return { name: 'Ada', roles: ['admin'] };
          if (method === 'me') return me;
          if (method === 'users') return users.promise;
          if (method === 'getProposal') return { id: 'P-1', status: 'open', evidence: [], trail: [], failedBefore: [] };
          return [];
        };
      },
    });
    const store = createAppStore(api);
    await store.getState().signIn('Ada', '1234');
    await store.getState().select('P-1');
    store.setState({ screen: 'users', stock: [{ item: 'ITEM-1' }] as never });
    const late = store.getState().loadUsers(); // on its way
    me = null; // an admin disabled Ada in another tab
    await store.getState().loadMe();
    expect(store.getState()).toMatchObject({ user: null, selected: null, screen: 'inbox', stock: [] });
    users.resolve([{ name: 'Per', roles: ['operator'], disabled: false, hasBadge: false }] as never);
    await late;
    expect(store.getState().users).toEqual([]);
  });
});
