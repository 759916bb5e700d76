// The work queue's priority and the inbox's "not carried out n× before" in the language's number
// format, as the navigation's count and History's cells write theirs (server-side markup, no
// browser): a priority of 2500 read "2500" beside History's "2.500" in German, and a negative one
// kept an ASCII hyphen in Norwegian, which writes "−5".
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { JobView, ProposalDetail, SiteApi, SiteStatus } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { formatNumber } from '../i18n/messages.ts';
import { createAppStore } from '../store/store.ts';
import { Inbox } from './Inbox.tsx';
import { WorkQueue } from './WorkQueue.tsx';

const T = Date.UTC(2026, 11, 1, 12, 0);
const LANGS = ['en', 'nb', 'de'] as const;

function markup(lang: (typeof LANGS)[number], state: Record<string, unknown>, screen: () => unknown): string {
  const store = createAppStore({} as SiteApi);
  store.setState({ lang, status: { nowMs: T } as SiteStatus, ...state });
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(screen as () => null)));
}

const job = (job_id: string, priority: number): JobView => ({
  job_id, status: 'released', blocked_reason: null, capability: 'pick', material_item: null, material_qty: null, priority, due_at: null, assigned_resource: null,
});

describe("the work queue's priority", () => {
  it('is written as the language writes numbers', () => {
    const want = { en: ['2,500', '-5'], nb: ['2\u00a0500', '\u22125'], de: ['2.500', '-5'] };
    for (const lang of LANGS) {
      const html = markup(lang, { jobs: [job('J-1', 2500), job('J-2', -5)], resources: [] }, WorkQueue);
      const cell = (id: string) => {
        const row = html.slice(html.indexOf(`data-job="${id}"`));
        return row.split('<td')[5]!.replace(/^[^>]*>/, '').replace(/<\/td>.*$/s, '');
      };
      expect(cell('J-1'), lang).toBe(want[lang][0]);
      expect(cell('J-2'), lang).toBe(want[lang][1]);
      expect(formatNumber(lang, 2500), lang).toBe(want[lang][0]);
    }
  });
});

describe('the inbox\'s "not carried out n× before"', () => {
  it('writes its count as the language writes numbers, in the list and the panel', () => {
    const failed = Array.from({ length: 1200 }, (_, i) => ({ id: `P-${i + 2}`, atMs: T - i, detail: 'no answer' }));
    const p = {
      id: 'P-1', status: 'open', action: 'escalate_job', module: 'operations', params: {}, ruleId: 'r', ruleVersion: '1', risk: 'low', riskReason: 'x',
      explanation: 'Job J-1.', createdMs: T, evidence: [], trail: [], failedBefore: failed, failedBeforeCount: 1200,
    } as unknown as ProposalDetail;
    const want = { en: '1,200', nb: '1\u00a0200', de: '1.200' };
    for (const lang of LANGS) {
      const html = markup(lang, { proposals: [p], selected: p }, Inbox);
      expect(html, lang).not.toContain('1200×');
      expect(html.split(`${want[lang]}×`).length - 1, lang).toBe(2);
    }
  });
});
