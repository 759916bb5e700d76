// The names a screen reader gives the navigation and History's comparison table, in the chosen
// language: they were English in Norwegian and German ("main", "stock diff"), beside headings and
// buttons in the reader's language. Server-side markup, no browser.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { DiffResult, SiteApi } from '../../../core/site/api.ts';
import { App } from '../App.tsx';
import { StoreContext } from '../context.tsx';
import type { Lang } from '../i18n/messages.ts';
import { createAppStore, type AppState } from '../store/store.ts';
import { History } from './History.tsx';

function render(node: () => unknown, state: Partial<AppState>): string {
  const store = createAppStore({} as SiteApi);
  store.setState(state);
  store.getInitialState = store.getState; // what server-side rendering reads
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(node as () => null)));
}

const navLabel = (lang: Lang) =>
  /<nav aria-label="([^"]*)"/.exec(
    render(App, { lang, firstRun: { initialized: true, siteId: 'demo' } as AppState['firstRun'], user: { name: 'Lena', roles: ['shift_lead'] } }),
  )?.[1];

const DIFF: DiffResult = {
  table: 'stock', from: { snapshotId: 41, snapshotMs: 0 }, to: { snapshotId: 57, snapshotMs: 0 }, more: false, columns: ['item', 'on_hand'], types: ['STRING', 'INT'],
  changes: [{ kind: '+I', row: ['ITEM-002', 3] }],
};
const diffLabel = (lang: Lang) => /<table aria-label="([^"]*)"/.exec(render(History, { lang, tables: [], tags: [], history: null, diff: DIFF }))?.[1];

describe('labels for a screen reader in the chosen language', () => {
  it.each([
    ['en', 'Main'],
    ['nb', 'Hovedmeny'],
    ['de', 'Hauptmenü'],
  ] as Array<[Lang, string]>)('names the navigation in %s', (lang, label) => {
    expect(navLabel(lang)).toBe(label);
  });

  it.each([
    ['en', 'stock, changes'],
    ['nb', 'stock, endringer'],
    ['de', 'stock, Änderungen'],
  ] as Array<[Lang, string]>)("names History's comparison table in %s", (lang, label) => {
    expect(diffLabel(lang)).toBe(label);
  });
});
