// The error line is about what was just done on the screen: found on the floor PC, the site's
// refusal of a reorder level on Stock stood on the Dead letters screen and over the Users screen
// after a user was added there, until someone clicked its text. It now goes when the person moves
// to another screen, and when what the site refused is then done (a form that goes through).
import { describe, expect, it } from 'vitest';
import type { SiteApi } from '../../../core/site/api.ts';
import { createAppStore } from './store.ts';

function fakeApi(refuse: { policy: boolean; user: boolean }): SiteApi {
  return new Proxy({} as SiteApi, {
    get(_t, method: string) {
      return async () => {
        if (method === 'setReorderPolicy' && refuse.policy) throw Object.assign(new Error('config agent.reorderByItem.ITEM-007: expected orderUpTo > reorderPoint, got 5 ≤ 10'), { kind: 'invalid' });
        if (method === 'addUser' && refuse.user) throw Object.assign(new Error('secret: PIN 1111: one digit repeated'), { kind: 'invalid' });
        if (method === 'setReorderPolicy') return { reorder_point: 10, order_up_to: 40, reorder_scope: 'location' };
        if (method === 'addUser') return { name: 'Jon', roles: ['operator'], disabled: false };
        return [];
      };
    },
  });
}

describe('the error line', () => {
  it('does not follow the person to another screen', async () => {
    const store = createAppStore(fakeApi({ policy: true, user: false }));
    store.setState({ user: { name: 'Lena', roles: ['admin'] }, screen: 'stock' });
    expect(await store.getState().setReorderPolicy('ITEM-007', 'A-02', { reorderPoint: 10, orderUpTo: 5 })).toBe(false);
    expect(store.getState().error).toMatch(/expected orderUpTo > reorderPoint/);
    store.getState().go('deadLetters');
    expect(store.getState().screen).toBe('deadLetters');
    expect(store.getState().error).toBeNull();
  });

  it('goes when the refused change is then made', async () => {
    const refuse = { policy: true, user: true };
    const store = createAppStore(fakeApi(refuse));
    store.setState({ user: { name: 'Lena', roles: ['admin'] }, screen: 'stock' });
    await store.getState().setReorderPolicy('ITEM-007', 'A-02', { reorderPoint: 10, orderUpTo: 5 });
    expect(store.getState().error).not.toBeNull();
    refuse.policy = false;
    expect(await store.getState().setReorderPolicy('ITEM-007', 'A-02', { reorderPoint: 10, orderUpTo: 40 })).toBe(true);
    expect(store.getState().error).toBeNull();
    // The same for the forms of the users and dead-letters screens (one helper, `succeeded`).
    expect(await store.getState().addUser('Jon', ['operator'], '1111')).toBe(false);
    expect(store.getState().error).toBe('secret: PIN 1111: one digit repeated');
    refuse.user = false;
    expect(await store.getState().addUser('Jon', ['operator'], '0451')).toBe(true);
    expect(store.getState().error).toBeNull();
  });
});

// The site restarted (or the line dropped): the 30 s `me` check, a resync's read, failed with "the
// site did not answer", and the error line kept saying so after the site was back and every screen
// read again — until someone closed it. The site answering again (the events socket back, its
// resync; a status after the "no word from the site" marker) takes that error away; any other stays.
describe('the error line after the site was back', () => {
  const NO_ANSWER = 'the site did not answer';
  function site() {
    const up = { now: false };
    const api = new Proxy({} as SiteApi, {
      get(_t, method: string) {
        return async () => {
          if (!up.now) throw Object.assign(new Error(NO_ANSWER), { kind: 'internal' });
          if (method === 'me') return { name: 'Lena', roles: ['shift_lead'] };
          if (method === 'status') return { nowMs: 1, statusEveryMs: 5_000, tables: [], alarms: [] };
          return [];
        };
      },
    });
    const store = createAppStore(api);
    store.setState({ user: { name: 'Lena', roles: ['shift_lead'] }, screen: 'inbox' });
    return { store, up };
  }
  it('goes once the events socket is back and its reads answer', async () => {
    const { store, up } = site();
    await store.getState().loadMe();
    expect(store.getState().error).toBe(NO_ANSWER);
    up.now = true;
    store.getState().resync();
    await new Promise((r) => setTimeout(r, 0));
    expect(store.getState().error).toBeNull();
  });
  it('goes with a status after the site was said quiet', async () => {
    const { store } = site();
    await store.getState().loadMe();
    store.setState({ siteQuiet: { sinceMs: 0, forMs: 20_000 } });
    store.getState().applyEvent({ type: 'status', status: { nowMs: 5, statusEveryMs: 5_000, tables: [], alarms: [] } as never });
    expect(store.getState().siteQuiet).toBeNull();
    expect(store.getState().error).toBeNull();
  });
  it('stays while the site still does not answer, and a refusal stays', async () => {
    const { store, up } = site();
    await store.getState().loadMe();
    store.getState().resync();
    await new Promise((r) => setTimeout(r, 0));
    expect(store.getState().error).toBe(NO_ANSWER);
    up.now = true;
    store.setState({ error: 'secret: PIN 1111: one digit repeated', errorRefusal: null });
    store.getState().resync();
    await new Promise((r) => setTimeout(r, 0));
    expect(store.getState().error).toBe('secret: PIN 1111: one digit repeated');
  });
});
