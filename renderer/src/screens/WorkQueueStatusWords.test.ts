// The work queue's search finds a job by its status as the screen shows it: "blokkert", "in Arbeit",
// "in progress". The site matches the status as stored (blocked, in_progress), so a status typed
// as it stood on the screen in Norwegian or German (or "in progress" in English) found nothing.
// The page finds the stored statuses its words of the search name and sends them with the search
// (`statuses`), which the site matches beside the text, in one request, its order and its cut
// (core/site service.test.ts). Server-side markup, no browser, over a fake site that matches and
// orders as core/site service.ts `jobs` does.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { JobView, SiteApi } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import type { Lang } from '../i18n/messages.ts';
import { createAppStore, WORK_ROWS, type AppStore } from '../store/store.ts';
import { WorkQueue } from './WorkQueue.tsx';

const job = (job_id: string, status: string, blocked_reason: string | null = null, priority = 1): JobView => ({
  job_id, status, blocked_reason, capability: 'pick', material_item: null, material_qty: null, priority, due_at: null, assigned_resource: null,
});
const JOBS = [job('J-1', 'blocked', 'material short: ITEM-003'), job('J-2', 'in_progress'), job('J-3', 'released'), job('J-4', 'done'), job('J-6', 'blocked', 'in Arbeit bei Team B', 5)];

const ORDER = ['blocked', 'released', 'in_progress', 'done'];
const byOrder = (a: JobView, b: JobView) => ORDER.indexOf(a.status) - ORDER.indexOf(b.status) || (b.priority ?? 0) - (a.priority ?? 0) || (a.job_id < b.job_id ? -1 : 1);

/** The site's search: a part of a job's id, status, capability, item, resource or blocked reason, as stored, or a status of `statuses`. */
function site(jobs: JobView[]) {
  const requests: Array<{ search?: string; statuses?: string[] }> = [];
  const api = {
    workQueue: async (req: { search?: string; statuses?: string[]; limit?: number }) => {
      requests.push({ ...(req.search !== undefined ? { search: req.search } : {}), ...(req.statuses ? { statuses: req.statuses } : {}) });
      const q = req.search?.trim().toLowerCase() ?? '';
      const has = (v: string | null) => v !== null && v.toLowerCase().includes(q);
      const picked = jobs.filter((j) => !q || has(j.job_id) || has(j.status) || (req.statuses ?? []).includes(j.status) || has(j.capability) || has(j.material_item) || has(j.assigned_resource) || has(j.blocked_reason));
      return { jobs: picked.sort(byOrder).slice(0, req.limit), resources: [], waiting: [] };
    },
  } as unknown as SiteApi;
  return { api, requests };
}

async function search(lang: Lang, q: string, jobs = JOBS): Promise<{ store: AppStore; shown: string[]; requests: Array<{ search?: string; statuses?: string[] }> }> {
  const { api, requests } = site(jobs);
  const store = createAppStore(api);
  store.setState({ lang });
  await store.getState().loadWork(q);
  store.getInitialState = store.getState;
  const html = renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(WorkQueue)));
  return { store, shown: [...html.matchAll(/data-job="([^"]+)"/g)].map((m) => m[1]!), requests };
}

describe('Work queue: a search by a status as the screen words it', () => {
  it.each([
    ['nb', 'blokkert', ['J-6', 'J-1']],
    ['nb', 'Pågår', ['J-2']],
    ['de', 'freigeg', ['J-3']],
    ['de', 'erledigt', ['J-4']],
    ['en', 'in progress', ['J-2']],
  ] as Array<[Lang, string, string[]]>)('finds the jobs of that status in %s ("%s")', async (lang, q, jobs) => {
    expect((await search(lang, q)).shown).toEqual(jobs);
  });

  it('finds them beside the jobs the text is in, in the site\'s order', async () => {
    // J-6's reason says "in Arbeit"; J-2 is in progress, "in Arbeit" in German.
    expect((await search('de', 'in arbeit')).shown).toEqual(['J-6', 'J-2']);
  });

  it('asks the site once, with the stored statuses its words name, and in the language chosen only', async () => {
    expect((await search('de', 'in arbeit')).requests).toEqual([{ search: 'in arbeit', statuses: ['in_progress'] }]);
    const plain = await search('nb', 'ITEM-003');
    expect(plain.shown).toEqual(['J-1']);
    expect(plain.requests).toEqual([{ search: 'ITEM-003' }]);
    expect((await search('en', 'blokkert')).shown).toEqual([]);
  });

  it('shows at most WORK_ROWS of them, and says there are more', async () => {
    const many = Array.from({ length: WORK_ROWS + 2 }, (_, i) => job(`J-${String(i).padStart(4, '0')}`, 'blocked'));
    const { store, shown } = await search('nb', 'blokkert', many);
    expect(shown).toHaveLength(WORK_ROWS);
    expect(store.getState().jobsMore).toBe(true);
  });
});
