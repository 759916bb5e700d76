// The Stock screen says "No rows match." under an empty list read with a search or the below
// filter. It went by the search asked for last, not the one the rows were read with: with the
// rows of a search that matched nothing still shown, a cleared search on its way or refused took
// the line away, and the empty table looked unloaded. Server-side markup, no browser.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { SiteApi, StockView } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { createAppStore, type AppStore } from '../store/store.ts';
import { Stock } from './Stock.tsx';

const ROW: StockView = {
  item: 'ITEM-001', location: 'A-01', on_hand: 30, reserved: 4, inbound: 0, available: 26, projected: 26, reorder_point: 5, order_up_to: 20,
  reorder_scope: 'default', reorder_set: null, item_policy: null, below_reorder_point: false, waiting: [],
};

function noMatchLine(store: AppStore): boolean {
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(Stock))).includes('no-rows');
}

/** A site that answers the first read (a search matching nothing) and refuses or holds the next. */
function site(next: 'refuse' | 'hold'): AppStore {
  let reads = 0;
  const api = {
    stock: async () => {
      if (reads++ === 0) return [];
      if (next === 'refuse') throw Object.assign(new Error('the site is busy'), { kind: 'internal' });
      return new Promise(() => undefined);
    },
    configChanges: async () => [],
  };
  const store = createAppStore(api as unknown as SiteApi);
  store.setState({ lang: 'en', user: { name: 'Lena', roles: ['viewer'] } });
  return store;
}

describe('Stock: "No rows match." follows the rows shown', () => {
  it('stays while a cleared search is on its way', async () => {
    const store = site('hold');
    await store.getState().loadStock('NOPE', false);
    expect(noMatchLine(store)).toBe(true);
    void store.getState().loadStock('', false);
    expect(noMatchLine(store)).toBe(true);
  });

  it('stays when the cleared search is refused, and the below filter counts as a filter', async () => {
    const store = site('refuse');
    await store.getState().loadStock('', true);
    expect(noMatchLine(store)).toBe(true);
    await store.getState().loadStock('', false);
    expect(store.getState().error).toBe('the site is busy');
    expect(noMatchLine(store)).toBe(true);
  });

  it('goes once an unfiltered read comes back empty (nothing to match: no such line) or with rows', async () => {
    let rows: StockView[] = [];
    const store = createAppStore({ stock: async () => rows, configChanges: async () => [] } as unknown as SiteApi);
    store.setState({ lang: 'en', user: { name: 'Lena', roles: ['viewer'] } });
    await store.getState().loadStock('NOPE', false);
    expect(noMatchLine(store)).toBe(true);
    await store.getState().loadStock('', false);
    expect(noMatchLine(store)).toBe(false);
    rows = [ROW];
    await store.getState().loadStock('ITEM', false);
    expect(noMatchLine(store)).toBe(false);
  });
});
