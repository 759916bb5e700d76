// An admin's role changed while signed in (another admin's setRoles: the site keeps the session
// and `me`, asked every 30 s, answers the new roles). The navigation dropped Users, but the
// screen stayed 'users', which App renders only for an admin: the page showed nothing under the
// navigation, nothing said why, and the users list (names, roles, who has a badge) stayed in the
// store of someone no longer allowed to read it.
import { describe, expect, it } from 'vitest';
import type { SiteApi } from '../../../core/site/api.ts';
import { createAppStore } from './store.ts';

function site(me: () => { name: string; roles: string[] }) {
  return new Proxy({} as SiteApi, {
    get(_t, method: string) {
      return async () => {
        if (method === 'signIn' || method === 'me') return me();
        if (method === 'users') return [{ name: 'Per', roles: ['operator'], disabled: false, hasBadge: false }];
        if (method === 'status') return null;
        return [];
      };
    },
  });
}

describe('the signed-in person’s roles changed at the site', () => {
  it('an admin made a shift lead on the Users screen is taken to the inbox, the users list gone', async () => {
    let who = { name: 'Ada', roles: ['admin'] };
    const store = createAppStore(site(() => who));
    await store.getState().signIn('Ada', '1234');
    store.getState().go('users');
    await store.getState().loadUsers();
    expect(store.getState().users).toHaveLength(1);
    who = { name: 'Ada', roles: ['shift_lead'] };
    await store.getState().loadMe();
    expect(store.getState()).toMatchObject({ user: { name: 'Ada', roles: ['shift_lead'] }, screen: 'inbox', users: [] });
  });

  it('on another screen, stays there (the screen is still theirs)', async () => {
    let who = { name: 'Ada', roles: ['admin'] };
    const store = createAppStore(site(() => who));
    await store.getState().signIn('Ada', '1234');
    store.getState().go('stock');
    who = { name: 'Ada', roles: ['operator'] };
    await store.getState().loadMe();
    expect(store.getState()).toMatchObject({ user: { roles: ['operator'] }, screen: 'stock' });
  });

  it('an admin still an admin keeps the Users screen', async () => {
    let who = { name: 'Ada', roles: ['admin'] };
    const store = createAppStore(site(() => who));
    await store.getState().signIn('Ada', '1234');
    store.getState().go('users');
    await store.getState().loadUsers();
    who = { name: 'Ada', roles: ['admin', 'shift_lead'] };
    await store.getState().loadMe();
    expect(store.getState()).toMatchObject({ screen: 'users', users: [{ name: 'Per' }] });
  });
});
