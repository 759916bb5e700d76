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
