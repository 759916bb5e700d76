// The Work queue's machines and teams are filtered by the search on this screen, the jobs by the
// site; both match alike (case-insensitive, a part of the text, the search trimmed: core/site
// service.ts `jobs`, `resourcesMatching` here). But the machines were filtered by the search asked
// for last while the jobs were those of the last reply: a search the site refused (or one still on
// its way) showed the machine it named beside the jobs of the search before, none of them its.
// Now both are of the same reply's search. Server-side markup, no browser.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { JobView, ResourceView, SiteApi } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { createAppStore, type AppStore } from '../store/store.ts';
import { WorkQueue } from './WorkQueue.tsx';

const job = (job_id: string, assigned_resource: string): JobView => ({ job_id, status: 'released', blocked_reason: null, capability: 'pick', material_item: null, material_qty: null, priority: 1, due_at: null, assigned_resource });
const RESOURCES: ResourceView[] = [
  { resource_id: 'FORK-1', kind: 'machine', capability: 'forklift', state: 'busy', since: null },
  { resource_id: 'PICK-A', kind: 'team', capability: 'pick', state: 'free', since: null },
];
const JOBS = [job('J-1', 'FORK-1'), job('J-2', 'FORK-1')];

function render(store: AppStore): { jobs: string[]; resources: string[]; noMatch: boolean } {
  store.getInitialState = store.getState;
  const html = renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(WorkQueue)));
  const all = (attr: string) => [...html.matchAll(new RegExp(`${attr}="([^"]+)"`, 'g'))].map((m) => m[1]!);
  return { jobs: all('data-job'), resources: all('data-resource'), noMatch: html.includes('no-rows') };
}

/** A site that answers the first read (all jobs) and refuses or holds the next. */
function site(next: 'refuse' | 'hold') {
  let reads = 0;
  const api = {
    workQueue: async () => {
      if (reads++ === 0) return { jobs: JOBS, resources: RESOURCES, waiting: [] };
      if (next === 'refuse') throw Object.assign(new Error('the site is busy'), { kind: 'internal' });
      return new Promise(() => undefined);
    },
  };
  const store = createAppStore(api as unknown as SiteApi);
  store.setState({ lang: 'en' });
  return store;
}

describe('Work queue: the jobs and the machines of one search', () => {
  it('keeps the machines of the jobs shown when a search is refused', async () => {
    const store = site('refuse');
    await store.getState().loadWork('');
    await store.getState().loadWork('pick-a');
    expect(store.getState().error).toBe('the site is busy');
    // The jobs of no search are still shown: so are all the machines and teams, FORK-1 theirs.
    expect(render(store)).toEqual({ jobs: ['J-1', 'J-2'], resources: ['FORK-1', 'PICK-A'], noMatch: false });
  });

  it('keeps them while a search is on its way, and a refresh asks for the search typed last', async () => {
    const store = site('hold');
    await store.getState().loadWork('');
    void store.getState().loadWork('J-404');
    expect(render(store)).toEqual({ jobs: ['J-1', 'J-2'], resources: ['FORK-1', 'PICK-A'], noMatch: false });
    expect(store.getState().workSearch).toBe('J-404');
  });

  it('filters them by the search of the reply once it comes', async () => {
    const store = createAppStore({ workQueue: async (req: { search?: string }) => ({ jobs: req.search ? [] : JOBS, resources: RESOURCES, waiting: [] }) } as unknown as SiteApi);
    store.setState({ lang: 'en' });
    await store.getState().loadWork(' Pick-A ');
    expect(render(store)).toEqual({ jobs: [], resources: ['PICK-A'], noMatch: true });
  });
});
