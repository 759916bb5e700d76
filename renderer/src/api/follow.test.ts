// followWhileSignedIn against the real store and a fake API: the event subscription exists exactly
// while someone is signed in, and what it delivers reaches the store.
import { describe, expect, it } from 'vitest';
import type { SiteApi, SiteEvent, SiteStatus } from '../../../core/site/api.ts';
import { createAppStore } from '../store/store.ts';
import { followWhileSignedIn } from './follow.ts';

function fakeApi(me: { name: string; roles: string[] } | null) {
  return new Proxy({} as SiteApi, {
    get(_t, method: string) {
      return async () => {
        if (method === 'signIn') return { name: 'Kari', roles: ['shift_lead'] };
        if (method === 'me') return me;
        if (method === 'signOut') return null;
        return [];
      };
    },
  });
}

function fakeEvents() {
  const listeners = new Set<(e: SiteEvent) => void>();
  const resumes = new Set<() => void>();
  let opened = 0;
  const subscribe = (l: (e: SiteEvent) => void, onResume: () => void) => {
    opened++;
    listeners.add(l);
    resumes.add(onResume);
    return () => (listeners.delete(l), resumes.delete(onResume));
  };
  return { subscribe, listeners, resumes, opened: () => opened };
}

describe('followWhileSignedIn', () => {
  it('opens the events only after sign-in and closes them at sign-out', async () => {
    const store = createAppStore(fakeApi(null));
    const ev = fakeEvents();
    const stop = followWhileSignedIn(store, ev.subscribe);
    expect(ev.opened()).toBe(0); // the sign-in screen: no socket for the site to refuse

    await store.getState().signIn('Kari', '1111');
    expect(ev.opened()).toBe(1);
    expect(ev.listeners.size).toBe(1);
    const status = { site: 'demo' } as unknown as SiteStatus;
    for (const l of ev.listeners) l({ type: 'status', status });
    expect(store.getState().status).toBe(status); // delivered to the store

    // Other state changes while signed in do not open a second subscription.
    store.setState({ screen: 'stock' });
    expect(ev.opened()).toBe(1);

    await store.getState().signOut();
    expect(ev.listeners.size).toBe(0);

    await store.getState().signIn('Kari', '1111');
    expect(ev.opened()).toBe(2);
    expect(ev.listeners.size).toBe(1);
    stop();
    expect(ev.listeners.size).toBe(0);
    await store.getState().signIn('Kari', '1111');
    expect(ev.opened()).toBe(2); // stopped for good
  });

  it('follows at once a page opened on a live session, and lets go when the site ends it', async () => {
    const store = createAppStore(fakeApi({ name: 'Kari', roles: ['shift_lead'] }));
    const ev = fakeEvents();
    followWhileSignedIn(store, ev.subscribe);
    expect(ev.opened()).toBe(0);
    await store.getState().loadMe(); // the page asks who is signed in
    expect(ev.listeners.size).toBe(1);
    store.setState({ user: null }); // e.g. an API call answered unauthenticated
    expect(ev.listeners.size).toBe(0);
  });

  it('reads the inbox, the status and the open proposal again when the events flow again after a break', async () => {
    const calls: string[] = [];
    const base = fakeApi(null);
    const api = new Proxy({} as SiteApi, {
      get(_t, method: string) {
        return async (req: unknown) => {
          calls.push(method);
          if (method === 'getProposal') return { id: (req as { id: string }).id, status: 'withdrawn', evidence: [], trail: [], failedBefore: [] };
          return (base[method as keyof SiteApi] as (r: unknown) => Promise<unknown>)(req);
        };
      },
    });
    const store = createAppStore(api);
    const ev = fakeEvents();
    followWhileSignedIn(store, ev.subscribe);
    await store.getState().signIn('Kari', '1111');
    await store.getState().select('P-1');
    calls.length = 0;
    for (const r of ev.resumes) r();
    await new Promise((r) => setTimeout(r, 0));
    expect(calls.sort()).toEqual(['getProposal', 'listProposals', 'status']);
    expect(store.getState().selected?.status).toBe('withdrawn');
  });
});
