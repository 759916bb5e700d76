// A count before a noun or verb in the count's number, in every language (pluralKey and the
// messages' `_one` forms): German said "1 Schritte warten" and "1 warten auf eine Entscheidung",
// English "1 steps, 4 kB pending"; Norwegian, whose nouns and verbs here do not change, says
// "1 steg venter" either way.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { Alarm, ProposalView, SiteApi, SyncStatus } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { Inbox } from '../screens/Inbox.tsx';
import { Sync } from '../screens/Sync.tsx';
import { createAppStore } from '../store/store.ts';
import { alarmText, MESSAGES, pluralKey, translate, type Lang, type MessageKey } from './messages.ts';

const LANGS: Lang[] = ['en', 'nb', 'de'];
const stalled = (pending: number | undefined, reason = 'step'): Alarm => ({
  kind: 'sync_stalled',
  message: '…',
  sinceMs: 0,
  params: { ...(pending === undefined ? {} : { pending }), reason, windowMs: 15 * 60_000 },
});

function render(component: () => unknown, state: Record<string, unknown>): string {
  const store = createAppStore({} as SiteApi);
  store.setState(state);
  // Server rendering reads the store's server snapshot, which is its initial state.
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(component as never)));
}

describe('pluralKey', () => {
  it('the `_one` form for 1 in each language, the plural for 0, 2 and a fraction; a key without one as it is', () => {
    for (const lang of LANGS) {
      expect(pluralKey(lang, 'sync.pending', 1)).toBe('sync.pending_one');
      for (const n of [0, 2, 21, 1.5]) expect(pluralKey(lang, 'sync.pending', n)).toBe('sync.pending');
      expect(pluralKey(lang, 'sync.target', 1)).toBe('sync.target');
    }
  });
});

describe('sync_stalled: the steps waiting', () => {
  it('one step in the singular, in nb and de (en shows the site’s message)', () => {
    expect(alarmText('de', stalled(1))).toMatch(/; 1 Schritt wartet$/);
    expect(alarmText('nb', stalled(1))).toMatch(/; 1 steg venter$/);
    expect(translate('en', pluralKey('en', 'alarm.sync_stalled.pending', 1), { pending: 1 })).toBe('1 step waiting');
    for (const reason of ['refused', 'waiting', 'planning', 'newer']) expect(alarmText('de', stalled(1, reason))).toMatch(/[^;]; 1 Schritt wartet$/);
  });

  it('none or many in the plural', () => {
    expect(alarmText('de', stalled(0))).toMatch(/; 0 Schritte warten$/);
    expect(alarmText('de', stalled(2))).toMatch(/; 2 Schritte warten$/);
    expect(alarmText('nb', stalled(2))).toMatch(/; 2 steg venter$/);
  });

  it('an alarm without a count: no "{pending}" shown', () => {
    expect(alarmText('de', stalled(undefined))).toBe('die Synchronisierung mit der Zentrale ist nicht in Ordnung: ein Schritt schlägt seit 15 Min. fehl, während die Zentrale andere Anfragen annimmt');
  });
});

describe('screens', () => {
  const sync: SyncStatus = {
    configured: true, target: '/mnt/hq', online: true, pendingItems: 1, pendingBytes: 1_000, oldestUnsyncedMs: 1_000,
    lastSuccessMs: Date.UTC(2026, 11, 1), current: null, recentItems: 1, recentBytes: 1_000, windowMs: 15 * 60_000, healthy: true, lastError: null,
  };

  it('the Sync screen: one step pending, one step done', () => {
    const en = render(Sync, { sync, lang: 'en' });
    expect(en).toContain('<p>1 step, 1 kB pending</p>');
    expect(en).toContain('In the last 15 mins: 1 step done, 1 kB sent');
    const de = render(Sync, { sync, lang: 'de' });
    expect(de).toContain('<p>1 Schritt, 1 kB ausstehend</p>');
    expect(de).toContain('1 Schritt erledigt');
    expect(render(Sync, { sync, lang: 'nb' })).toContain('<p>1 steg, 1 kB venter</p>');
    // Two in the plural.
    expect(render(Sync, { sync: { ...sync, pendingItems: 2, recentItems: 0 }, lang: 'de' })).toMatch(/2 Schritte, 1 kB ausstehend.*0 Schritte erledigt/);
  });

  it('the inbox heading: one proposal waits', () => {
    const p = { id: 'P-1', status: 'open', action: 'release_job', module: 'operations', params: {}, ruleId: 'r', ruleVersion: '1', risk: 'low', riskReason: '', explanation: '', createdMs: 0 } as unknown as ProposalView;
    expect(render(Inbox, { proposals: [p], lang: 'de' })).toContain('<h2 tabindex="-1">1 wartet auf eine Entscheidung</h2>');
    expect(render(Inbox, { proposals: [p], lang: 'en' })).toContain('<h2 tabindex="-1">1 waiting for a decision</h2>');
    expect(render(Inbox, { proposals: [{ ...p, status: 'deferred' }], lang: 'de' })).toContain('<h2 tabindex="-1">1 wartet auf eine Entscheidung, zurückgestellt</h2>');
    expect(render(Inbox, { proposals: [p, { ...p, id: 'P-2' }], lang: 'de' })).toContain('<h2 tabindex="-1">2 warten auf eine Entscheidung</h2>');
  });
});

describe('the messages', () => {
  const placeholders = (text: string) => new Set([...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]));
  /**
   * A count followed by a word that needs no `_one` form: a fixed cut shown only when more exist
   * (never 1), a participle that does not change ("1 replayed", "1 erneut verarbeitet"), a
   * quantity of stock, a duration.
   */
  const NO_SINGULAR = new Set(['history.tagsNewest', 'work.more', 'stock.more', 'inbox.mostUrgent', 'dead.replayed', 'dead.alike', 'stock.orderUpTo', 'streams.ago']);

  it('a count before a word has a `_one` form (or is one that needs none)', () => {
    const missing: string[] = [];
    for (const lang of LANGS) {
      for (const [key, text] of Object.entries(MESSAGES[lang])) {
        if (key.endsWith('_one') || NO_SINGULAR.has(key) || !/\{(n|items|pending|held|all|d|f)\}\s*\p{L}/u.test(text)) continue;
        if (!Object.hasOwn(MESSAGES[lang], `${key}_one`)) missing.push(`${lang} ${key}: ${text}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('each `_one` form has its plural, and uses none of the values the plural does not get', () => {
    for (const lang of LANGS) {
      for (const [key, text] of Object.entries(MESSAGES[lang])) {
        if (!key.endsWith('_one')) continue;
        const base = MESSAGES[lang][key.slice(0, -4) as MessageKey];
        expect(base, `${lang} ${key}`).toBeTypeOf('string');
        for (const p of placeholders(text)) expect(placeholders(base).has(p), `${lang} ${key} {${p}}`).toBe(true);
      }
    }
  });
});
