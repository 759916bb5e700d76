// After the first run's setup the first-run server hands over to the site, which takes a moment to
// start. The page shows "Site … is set up. Starting it…" and waits for the site itself to answer
// (FirstRun.tsx polls `firstRun`); the first-run backend says `starting` until then
// (core/site/first-run-starting.test.ts). Without it the
// page took the setup's own answer for the running site and showed the sign-in at once, whose
// sign-ins went to a server that was restarting (or, in Electron, were refused as "not set up").
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { FirstRunStatus, SiteApi } from '../../../core/site/api.ts';
import { App } from '../App.tsx';
import { StoreContext } from '../context.tsx';
import { createAppStore } from '../store/store.ts';

function renderApp(firstRun: FirstRunStatus): string {
  const store = createAppStore({} as SiteApi);
  store.setState({ lang: 'en', firstRun });
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(App)));
}

describe('the first run, once set up', () => {
  it('shows "Starting it…" while the site starts, and the sign-in once the site answers', () => {
    const starting = renderApp({ initialized: true, siteId: 'north', restoredSite: null, starting: true });
    expect(starting).toContain('Site north is set up. Starting it…');
    expect(starting).not.toContain('type="password"');
    const running = renderApp({ initialized: true, siteId: 'north', restoredSite: null });
    expect(running).not.toContain('Starting it…');
    expect(running).toContain('type="password"');
  });
});
