// The Tables screen's module streams rendered from the store's state (server-side markup, no
// browser): a stream whose later events wait behind missing seqs says which, and for how long,
// in each language; a stream without a gap says nothing of one.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { SiteApi, SiteStatus, StreamView } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { createAppStore } from '../store/store.ts';
import { Tables } from './Tables.tsx';

const NOW = Date.UTC(2026, 11, 3, 12, 0);

function render(streams: StreamView[], lang: 'en' | 'nb' | 'de' = 'en'): string {
  const store = createAppStore({} as SiteApi);
  const status = { siteId: 'dc1', nowMs: NOW, streams, tables: [], alarms: [], deadLetters: 0 } as unknown as SiteStatus;
  store.setState({ status, tables: [], lang });
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(Tables)));
}

const stream = (o: Partial<StreamView>): StreamView => ({
  stream: 'inventory/stock', lastEventMs: NOW - 5_000, lastSeq: 1_207, clockAheadMs: -20, appliedSeq: 1_202, gap: null, silentAllowedMs: 600_000, silent: false, ...o,
});

describe('Tables screen: module streams', () => {
  it('says which seqs a stream waits for, and since when, in each language', () => {
    const gap = { from: 1_203, to: 1_205, sinceMs: NOW - 180_000, skipAtMs: NOW + 120_000 };
    expect(render([stream({ gap })])).toContain('seq 1,203–1,205 missing for 3 mins: asked for again');
    expect(render([stream({ gap })], 'nb')).toMatch(/seq 1[\s\u00a0]203–1[\s\u00a0]205 mangler i 3 min: bedt om på nytt/);
    expect(render([stream({ gap })], 'de')).toContain('Seq 1.203–1.205 fehlt seit 3 Min.: erneut angefordert');
  });

  it('says nothing of a gap when nothing is held', () => {
    const html = render([stream({})]);
    expect(html).toContain('inventory/stock');
    expect(html).not.toContain('missing for');
  });
});
