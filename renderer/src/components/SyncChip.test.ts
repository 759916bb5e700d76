// The header's sync chip names a refusal or an emptied HQ folder in words of its own, in each
// language: "Sync: not healthy" beside an online line read as a passing hiccup, while nothing is
// sent until someone acts (HQ refusing this PC or its key; HQ's share not mounted).
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { SiteApi, SiteStatus, SyncStatus } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { createAppStore } from '../store/store.ts';
import { SyncChip } from './SyncChip.tsx';

const sync = (problems: string[]): SyncStatus => ({
  configured: true, target: 'dir:/mnt/hq', online: true, pendingItems: 3, pendingBytes: 0, oldestUnsyncedMs: 1000, lastSuccessMs: 0, current: null,
  recentItems: 0, recentBytes: 0, windowMs: 900_000, healthy: problems.length === 0, problems, lastError: null,
});

function chip(lang: 'en' | 'nb' | 'de', problems: string[]): string {
  const store = createAppStore({} as SiteApi);
  store.setState({ status: { sync: sync(problems) } as unknown as SiteStatus, lang });
  store.getInitialState = store.getState;
  const html = renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(SyncChip)));
  return html.replace(/<[^>]+>/g, '');
}

describe('the sync chip', () => {
  it("says HQ's folder is empty when HQ no longer holds this site's marker, in each language", () => {
    expect(chip('en', ['gone'])).toBe('⚠ HQ FOLDER EMPTY');
    expect(chip('nb', ['gone'])).toBe('⚠ HOVEDKONTORETS MAPPE TOM');
    expect(chip('de', ['gone'])).toBe('⚠ ORDNER DER ZENTRALE LEER');
  });

  it('keeps the refusal first, and online and healthy as before', () => {
    expect(chip('en', ['refused', 'gone'])).toBe('⚠ REFUSED BY HQ');
    expect(chip('en', ['step'])).toBe('⚠ Sync: NOT HEALTHY');
    expect(chip('en', [])).toBe('Online');
  });
});
