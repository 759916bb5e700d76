// The Tables screen's decision line under each table (its freshness budget's `decision`) in the
// chosen language (server-side markup, no browser): core's default text for the table is
// translated; a site's own text, and a default text shown under another table, are shown as
// written. That the English here is core's default word for word is checked against
// core/ingest DEFAULT_TABLE_BUDGETS in test/e2e/floor-ui-robust.e2e.test.ts (the renderer may
// import only types from core).
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { SiteApi, TableInfo } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { MESSAGES, tableDecision } from '../i18n/messages.ts';
import { createAppStore } from '../store/store.ts';
import { Tables } from './Tables.tsx';

const info = (table: string, decision: string): TableInfo => ({
  table, budgetMs: 60_000, decision, confirmedBy: 'ops', ageMs: 1_000, pendingEvents: 0, lastCommitMs: 1, snapshotId: 3, breaches: 0,
  withinBudget: true, snapshots: 3, tags: 0, bytes: 10, compactionDebt: 0,
});

function html(lang: 'en' | 'nb' | 'de', tables: TableInfo[]): string {
  const store = createAppStore({} as SiteApi);
  store.setState({ lang, tables });
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(Tables)));
}

const WORK = 'the work-queue agent proposes the next job every minute';
const TABLES = ['approval_inbox', 'work_queue', 'stock', 'resources', 'dead_letters'] as const;

describe('Tables screen: what each table’s freshness serves', () => {
  it('shows core’s default decision in Norwegian and German, the English on hover', () => {
    const rows = [info('work_queue', WORK)];
    expect(html('nb', rows)).toContain(`title="${WORK}">arbeidskø-agenten foreslår neste jobb hvert minutt</div>`);
    expect(html('de', rows)).toContain(`title="${WORK}">der Agent des Arbeitsvorrats schlägt jede Minute den nächsten Auftrag vor</div>`);
    expect(html('en', rows)).toContain(`>${WORK}</div>`);
    expect(html('nb', rows)).not.toContain(`>${WORK}<`);
  });

  it('translates every default table’s text, and each language has its own words', () => {
    for (const table of TABLES) {
      const en = MESSAGES.en[`tables.decision.${table}`];
      expect(tableDecision('en', table, en)).toBe(en);
      for (const lang of ['nb', 'de'] as const) {
        const shown = tableDecision(lang, table, en);
        expect(shown, `${lang} ${table}`).toBe(MESSAGES[lang][`tables.decision.${table}`]);
        expect(shown, `${lang} ${table}`).not.toBe(en);
      }
    }
  });

  it('names every column, the freshness gauge’s too, in each language', () => {
    const heads = (lang: 'en' | 'nb' | 'de') => {
      const h = html(lang, [info('work_queue', WORK)]);
      return [...h.slice(0, h.indexOf('</thead>')).matchAll(/<th scope="col">([^<]*)<\/th>/g)].map((m) => m[1]);
    };
    expect(heads('en')).toEqual(['Table', 'Age', 'Budget', 'Freshness', 'Pending events', 'Snapshots', 'Tags', 'Size', 'Compaction debt']);
    expect(heads('nb')[3]).toBe('Ferskhet');
    expect(heads('de')[3]).toBe('Aktualität');
    for (const lang of ['en', 'nb', 'de'] as const) expect(heads(lang).filter((x) => !x?.trim()), lang).toEqual([]);
  });

  it('shows a site’s own decision text as written, in every language', () => {
    const own = 'Schichtleiter gibt den nächsten Auftrag frei (Werk 2)';
    for (const lang of ['en', 'nb', 'de'] as const) expect(html(lang, [info('work_queue', own)])).toContain(`>${own}</div>`);
    // A default text almost as core has it is a site's own: not translated.
    expect(tableDecision('nb', 'work_queue', `${WORK}.`)).toBe(`${WORK}.`);
  });

  it('shows the default text of another table, or one for a table it has no words for, as written', () => {
    expect(tableDecision('de', 'stock', WORK)).toBe(WORK);
    expect(tableDecision('de', 'orders', WORK)).toBe(WORK);
  });
});
