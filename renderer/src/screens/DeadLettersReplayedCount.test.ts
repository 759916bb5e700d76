// What a replay came to, in the reader's number format: a flood replayed read "5000 replayed"
// under "5,000 unknown contract from inventory/stock" (German "5000" beside "5.000"), and the
// dismissal's "also every other" its count as it came.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { DeadLetterView, SiteApi } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { createAppStore } from '../store/store.ts';
import { DismissRow, DeadLetters } from './DeadLetters.tsx';

const letter: DeadLetterView = { id: '11', reason: 'bad_json', detail: 'payload is not JSON', topic: 't/a', payload: '{', receivedMs: 0, status: 'open', dismissed: null };

function render(lang: 'en' | 'nb' | 'de', node: ReturnType<typeof createElement>): string {
  const store = createAppStore({ deadLetters: async () => [letter] } as unknown as SiteApi);
  store.setState({ deadLetters: [letter], lang, user: { name: 'Lena', roles: ['shift_lead'] }, replayResult: { replayed: 5000, failed: 1250 } });
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, node));
}

describe('dead letters: counts in the locale', () => {
  it('says how many were replayed and still fail as numbers are written in the language', () => {
    expect(render('en', createElement(DeadLetters))).toContain('5,000 replayed, 1,250 still failing');
    expect(render('de', createElement(DeadLetters))).toContain('5.000 erneut verarbeitet, 1.250 weiterhin fehlerhaft');
    expect(render('nb', createElement(DeadLetters))).toMatch(/5\s000 kjørt på nytt, 1\s250 feiler fortsatt/);
  });

  it('the dismissal counts the letters like it listed here the same way', () => {
    const row = createElement('table', null, createElement('tbody', null, createElement(DismissRow, {
      id: '11', note: '', setNote: () => {}, alikeListed: 1999, offerAlike: true, alike: false, setAlike: () => {}, busy: false, onSubmit: () => {}, onCancel: () => {},
    })));
    expect(render('de', row)).toContain('(1.999 hier gelistet)');
  });
});
