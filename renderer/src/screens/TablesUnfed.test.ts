// The Tables screen for a table no binding feeds (status `fed: false`): it says "no source" in the
// reader's language where a fed table shows its age and a "within budget" gauge — 0 ms and a green
// gauge read as "current" for a table nothing updates.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { SiteApi, TableInfo } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { createAppStore } from '../store/store.ts';
import { Tables } from './Tables.tsx';

const info = (table: string, fed?: boolean): TableInfo => ({
  table, budgetMs: 60_000, decision: 'd', confirmedBy: 'c', ageMs: 0, pendingEvents: 0, lastCommitMs: null, snapshotId: null, breaches: 0, withinBudget: true,
  snapshots: 0, tags: 0, bytes: 0, compactionDebt: 0, ...(fed === undefined ? {} : { fed }),
});

function rows(lang: 'en' | 'nb' | 'de', tables: TableInfo[]): Map<string, string> {
  const store = createAppStore({} as SiteApi);
  store.setState({ tables, lang });
  store.getInitialState = store.getState;
  const html = renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(Tables)));
  const out = new Map<string, string>();
  for (const m of html.matchAll(/<tr[^>]*data-table="([^"]+)"[^>]*>.*?<\/tr>/gs)) out.set(m[1]!, m[0]);
  return out;
}

describe('Tables screen: a table no binding feeds', () => {
  it('says it has no source instead of an age and a gauge, in each language', () => {
    const words = { en: ['no source', 'within budget'], nb: ['ingen kilde', 'innenfor budsjett'], de: ['keine Quelle', 'im Budget'] } as const;
    for (const lang of ['en', 'nb', 'de'] as const) {
      const r = rows(lang, [info('resources', false), info('stock', true), info('work_queue')]);
      const [none, within] = words[lang];
      expect(r.get('resources')).toContain(`⊘ ${none}`);
      expect(r.get('resources')).not.toContain(within);
      expect(r.get('resources')).not.toContain('<meter');
      // Fed, or an older site that does not say: the age and its gauge as before.
      for (const fed of ['stock', 'work_queue']) {
        expect(r.get(fed)).toContain(within);
        expect(r.get(fed)).toContain('<meter');
        expect(r.get(fed)).not.toContain(none);
      }
    }
  });
});
