// While the site is quiet (no status for a while), `checkSite` moves the shown ages on every second
// (`selectShownStatus`). The header (App) and the inbox selected the whole shown status or its
// `nowMs`, so every second App, the open screen and each of a 500-row inbox's rows rendered again.
// Only what shows an age is to tick.
//
// A component renders again when a value it selects (zustand's `useStore`, through `useApp`)
// changes: Object.is, or shallowly for a `useShallow` selector. The real screens are rendered once
// (server-side markup), every selector each component used is recorded by the component's name, and
// each quiet second counts the components whose selected values changed.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it, vi } from 'vitest';
import type { ProposalView, SiteApi, SiteStatus } from '../../../core/site/api.ts';
import { App } from '../App.tsx';
import { WorkQueue } from './WorkQueue.tsx';
import { StoreContext } from '../context.tsx';
import { createAppStore, type AppState } from '../store/store.ts';

const recorded = vi.hoisted(() => new Map<string, Array<{ select: (s: unknown) => unknown; shallow: boolean }>>());

/** The component whose render called useStore: the first capitalised function of renderer/src on the stack. */
function caller(): string {
  for (const line of (new Error().stack ?? '').split('\n')) {
    const m = /at (?:Object\.)?([A-Z]\w*) \(.*renderer\/src\//.exec(line);
    if (m) return m[1]!;
  }
  return '?';
}

vi.mock('zustand', async (importOriginal) => {
  const real = (await importOriginal()) as { useStore: (store: unknown, select: (s: unknown) => unknown) => unknown };
  return {
    ...real,
    useStore: (store: unknown, select: (s: unknown) => unknown) => {
      const name = caller();
      recorded.set(name, [...(recorded.get(name) ?? []), { select, shallow: (select as { shallow?: boolean }).shallow === true }]);
      return real.useStore(store, select);
    },
  };
});
vi.mock('zustand/react/shallow', async (importOriginal) => ({
  ...((await importOriginal()) as object),
  useShallow: (f: (s: unknown) => unknown) => Object.assign((s: unknown) => f(s), { shallow: true }),
}));

const shallowEqual = (a: unknown, b: unknown): boolean => {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Object.is((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
};

const T0 = Date.UTC(2026, 11, 6, 8, 0, 0);
const proposal = (i: number): ProposalView =>
  ({ id: `P-1-${i}`, ruleId: 'r', ruleVersion: 1, action: 'assign_job', risk: 'medium', riskReason: 'r', explanation: `job J-${i} waits`, status: 'open', createdMs: T0 - i * 1000, params: {} }) as unknown as ProposalView;
const status = { siteId: 'osl1', nowMs: T0, statusEveryMs: 5_000, alarms: [], tables: [{ table: 'stock', budgetMs: 60_000, ageMs: 1_000, withinBudget: true, fed: true }], streams: [], deadLetters: 0, proposals: { open: 500, deferred: 0, oldestOpenMs: null }, ui: { idleSignOutMs: 0 } } as unknown as SiteStatus;

describe('a quiet site: what renders again each second', () => {
  it('only the ages, not App, the inbox or its rows', async () => {
    const clock = { mono: 0, wall: T0 };
    let answers = true;
    const api = { status: () => (answers ? Promise.resolve(status) : new Promise(() => {})), listProposals: async () => [] } as unknown as SiteApi;
    const store = createAppStore(api, undefined, { mono: () => clock.mono, wall: () => clock.wall });
    const proposals = Array.from({ length: 500 }, (_, i) => proposal(i));
    // One open in the panel too: its trail and evidence are not to render again each second either.
    const selected = { ...proposal(0), module: 'operations', evidence: [], trail: [{ atMs: T0 - 5_000, event: 'proposed', user: 'agent', detail: 'at 2026-12-06T07:59:55Z' }], failedBefore: [] };
    store.setState({ firstRun: { initialized: true, siteId: 'osl1' } as never, user: { name: 'Kari', roles: ['shift_lead'] }, lang: 'en', screen: 'inbox', proposals, selected: selected as never });
    await store.getState().loadStatus();
    answers = false;
    // Quiet: past 15 s without a status, the marker on.
    clock.mono += 20_000;
    clock.wall += 20_000;
    store.getState().checkSite();
    expect(store.getState().siteQuiet).not.toBeNull();
    store.getInitialState = store.getState;
    recorded.clear();
    const markup = renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(App)));
    expect(markup).toContain('J-499');
    expect([...recorded.keys()]).toEqual(expect.arrayContaining(['App', 'Inbox', 'ProposalPanel', 'ReadAt', 'Age']));
    const values = (s: AppState) => new Map([...recorded].map(([name, sel]) => [name, sel.map((x) => ({ ...x, v: x.select(s) }))]));
    const renders = new Map<string, number>();
    for (let second = 0; second < 10; second++) {
      const before = values(store.getState());
      clock.mono += 1_000;
      clock.wall += 1_000;
      store.getState().checkSite();
      const after = values(store.getState());
      for (const [name, was] of before) {
        const now = after.get(name)!;
        if (was.some((x, i) => !(x.shallow ? shallowEqual(x.v, now[i]!.v) : Object.is(x.v, now[i]!.v)))) renders.set(name, (renders.get(name) ?? 0) + 1);
      }
    }
    console.log('renders in 10 quiet seconds:', Object.fromEntries(renders));
    expect(renders.get('App') ?? 0).toBe(0);
    expect(renders.get('Inbox') ?? 0).toBe(0);
    expect(renders.get('ProposalPanel') ?? 0).toBe(0);
    // The ages do tick, each second: the list's and the panel's "as the agent read it … ago".
    expect(renders.get('Age')).toBe(10);
    expect(renders.get('ReadAt')).toBe(10);
  });
  it('nor the work queue, whose overdue marks follow the clock: it renders again when a job falls due', async () => {
    const clock = { mono: 0, wall: T0 };
    let answers = true;
    const api = { status: () => (answers ? Promise.resolve(status) : new Promise(() => {})) } as unknown as SiteApi;
    const store = createAppStore(api, undefined, { mono: () => clock.mono, wall: () => clock.wall });
    // 500 jobs; J-7 falls due 25 s after the last status (5 s into the quiet seconds below).
    const job = (i: number) => ({ job_id: `J-${i}`, status: 'released', priority: 1, capability: 'forklift', blocked_reason: null, assigned_to: null, due_at: new Date(i === 7 ? T0 + 25_000 : T0 + 3_600_000 + i).toISOString() });
    store.setState({ firstRun: { initialized: true, siteId: 'osl1' } as never, user: { name: 'Kari', roles: ['shift_lead'] }, lang: 'en', screen: 'work', jobs: Array.from({ length: 500 }, (_, i) => job(i)) as never, resources: [] });
    await store.getState().loadStatus();
    answers = false;
    clock.mono += 20_000;
    clock.wall += 20_000;
    store.getState().checkSite();
    store.getInitialState = store.getState;
    recorded.clear();
    const markup = renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(WorkQueue)));
    expect(markup).toContain('J-499');
    expect(markup).not.toContain('overdue-tag');
    let renders = 0;
    for (let second = 0; second < 10; second++) {
      const before = recorded.get('WorkQueue')!.map((x) => x.select(store.getState()));
      clock.mono += 1_000;
      store.getState().checkSite();
      const after = recorded.get('WorkQueue')!.map((x) => x.select(store.getState()));
      if (before.some((v, i) => !Object.is(v, after[i]))) renders++;
    }
    console.log('work queue renders in 10 quiet seconds:', renders);
    expect(renders).toBe(1);
    expect(renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(WorkQueue)))).toContain('overdue-tag');
  });
});
