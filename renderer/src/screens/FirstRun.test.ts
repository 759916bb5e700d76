// The first-run screen rendered from the store's state (server-side markup, no browser): on a
// directory `tilstand restore` filled, the site id is the restored one and cannot be changed.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { FirstRunStatus, SiteApi } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { createAppStore } from '../store/store.ts';
import { FirstRun } from './FirstRun.tsx';

/** The site id input's tag. */
const siteIdInput = (html: string) => /<input[^>]*name="siteId"[^>]*>/.exec(html)?.[0] ?? '';

function render(firstRun: FirstRunStatus): string {
  const store = createAppStore({} as SiteApi);
  store.setState({ firstRun, lang: 'en' });
  // Server rendering reads the store's server snapshot, which is its initial state.
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(FirstRun)));
}

describe('FirstRun screen', () => {
  it('a new directory: the site id is the user’s to give', () => {
    const html = render({ initialized: false, siteId: null, restoredSite: null });
    expect(html).toContain('This is a new Tilstand data directory');
    expect(siteIdInput(html)).toContain('value=""');
    expect(siteIdInput(html)).not.toMatch(/readonly/i);
  });

  it('a restored directory: the restored site id, read-only, and what setup will do', () => {
    const html = render({ initialized: false, siteId: null, restoredSite: 'north' });
    expect(html).toContain('This directory holds site north, restored from headquarters');
    expect(siteIdInput(html)).toContain('value="north"');
    expect(siteIdInput(html)).toMatch(/readonly/i);
  });
});
