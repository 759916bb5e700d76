// The page's first question, whether the site is set up (`firstRun`), asked again while it goes
// unanswered: App asked it once, and a site that was down or restarting then left the page blank
// until someone reloaded it — on a kiosk PC, nobody. The page says so meanwhile (with Try again).
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { SiteApi } from '../../../core/site/api.ts';
import { App } from '../App.tsx';
import { StoreContext } from '../context.tsx';
import { fakeTimers } from '../testing/fake-timers.ts';
import { createAppStore, FIRST_RUN_RETRY_MS } from './store.ts';

/** A store over a site whose first `failures` firstRun reads fail; `asked` counts the reads. */
function site(failures: number) {
  const clock = fakeTimers();
  let asked = 0;
  const api = {
    firstRun: async () => {
      if (++asked <= failures) throw new Error('fetch failed');
      return { initialized: true, siteId: 'north' };
    },
  } as unknown as SiteApi;
  const store = createAppStore(api, clock.timers);
  store.setState({ lang: 'en' });
  const flush = async () => {
    for (let i = 0; i < 20; i++) await Promise.resolve();
  };
  return { store, clock, flush, asked: () => asked };
}

describe('the first read of the site, unanswered', () => {
  it('is asked again every FIRST_RUN_RETRY_MS until it is answered, and then no more', async () => {
    const s = site(2);
    await s.store.getState().loadFirstRun();
    expect(s.store.getState()).toMatchObject({ firstRun: null, firstRunUnread: true });
    s.clock.advance(FIRST_RUN_RETRY_MS);
    await s.flush();
    expect(s.asked()).toBe(2);
    s.clock.advance(FIRST_RUN_RETRY_MS);
    await s.flush();
    expect(s.asked()).toBe(3);
    expect(s.store.getState()).toMatchObject({ firstRun: { initialized: true, siteId: 'north' }, firstRunUnread: false });
    expect(s.clock.pending()).toBe(0);
  });

  it('a Try again while a retry waits leaves one retry waiting, not two', async () => {
    const s = site(10);
    await s.store.getState().loadFirstRun();
    await s.store.getState().loadFirstRun();
    expect(s.clock.pending()).toBe(1);
  });

  it('once answered, a failing read (the first-run screen polling a restarting site) schedules nothing', async () => {
    const clock = fakeTimers();
    const store = createAppStore({ firstRun: async () => Promise.reject(new Error('restarting')) } as unknown as SiteApi, clock.timers);
    store.setState({ firstRun: { initialized: true, siteId: 'north', starting: true } } as never);
    await store.getState().loadFirstRun();
    expect(clock.pending()).toBe(0);
    expect(store.getState().firstRunUnread).toBe(false);
  });

  it('the page says the site does not answer and offers Try again, instead of staying blank', async () => {
    const s = site(1);
    await s.store.getState().loadFirstRun();
    s.store.getInitialState = s.store.getState;
    const html = renderToStaticMarkup(createElement(StoreContext.Provider, { value: s.store }, createElement(App)));
    expect(html).toMatch(/role="alert"[^>]*>[^<]*(site does not answer)/);
    expect(html).toMatch(/<button[^>]*>Try again<\/button>/);
  });
});
