// What was decided lately, on the Inbox screen (its Decided toggle): approved, rejected and stale
// proposals, the newest decision first, each with when, who, the decision and how far its command
// got — read from the site's listing, again on every change of the inbox while shown. And the
// open proposal's panel says when the agent read what its explanation says. Server-side markup
// and a fake site API, no browser.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ProposalDetail, ProposalView, SiteApi, SiteApiMethods } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { createAppStore, DECIDED_ROWS, type AppStore } from '../store/store.ts';
import { Inbox } from './Inbox.tsx';

const env = (globalThis as { process?: { env: Record<string, string | undefined> } }).process!.env;
let tz: string | undefined;
beforeEach(() => {
  tz = env.TZ;
  env.TZ = 'Europe/Oslo'; // UTC+1 in December
});
afterEach(() => {
  if (tz === undefined) delete env.TZ;
  else env.TZ = tz;
});

const T = Date.UTC(2026, 11, 6, 4, 0); // Sun 6 Dec, 05:00 in Oslo
const min = 60_000;
const view = (id: string, o: Partial<ProposalView> = {}): ProposalView => ({
  id, status: 'approved', action: 'assign_job', module: 'operations', params: {}, ruleId: 'assign-job', ruleVersion: '1', risk: 'low', riskReason: 'reversible', explanation: `Start ${id}.`, createdMs: T, ...o,
});

/** A site API whose listProposals answers `lists` in turn (the last one again), recording each request. */
function site(...lists: ProposalView[][]): { api: SiteApi; asked: SiteApiMethods['listProposals']['req'][] } {
  const asked: SiteApiMethods['listProposals']['req'][] = [];
  const api = new Proxy({} as SiteApi, {
    get(_t, m: string) {
      if (m === 'listProposals') return async (req: SiteApiMethods['listProposals']['req']) => (asked.push(req), req.status?.includes('open') ? [] : (lists[Math.min(asked.filter((r) => !r.status?.includes('open')).length - 1, lists.length - 1)] ?? []));
      return async () => [];
    },
  });
  return { api, asked };
}

const flush = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

function render(store: AppStore): string {
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(Inbox)));
}

describe('the Decided list', () => {
  it('asks the site for the newest decisions (approved, rejected, stale), bounded, and lists them in its order', async () => {
    // Made first, decided last (it waited deferred): the site sorts by decision (core/inbox order 'decided').
    const late = view('P-1', { createdMs: T - 60 * min, decidedBy: 'kari', decidedMs: T + 20 * min, command: { module: 'operations', progress: 'applied', updatedMs: T + 21 * min } });
    const early = view('P-2', { createdMs: T, status: 'rejected', decidedBy: 'ola', decidedMs: T + 5 * min });
    const { api, asked } = site([late, early]);
    const store = createAppStore(api);
    store.setState({ user: { name: 'kari', roles: ['shift_lead'] } });
    store.getState().showInboxView('decided');
    await flush();
    expect(asked).toEqual([{ status: ['approved', 'rejected', 'stale'], order: 'decided', limit: DECIDED_ROWS }]);
    expect(store.getState().decided?.map((p) => p.id)).toEqual(['P-1', 'P-2']);
  });

  it('lets go of a proposal of the other list when switched (a waiting one with Approve beside the Decided list); keeps one of its own', async () => {
    const { api } = site([view('P-1', { decidedBy: 'kari', decidedMs: T + min })]);
    const store = createAppStore(api);
    const waiting = { ...view('P-2', { status: 'open' }), evidence: [], trail: [] } as unknown as ProposalDetail;
    const decided = { ...view('P-1', { decidedBy: 'kari', decidedMs: T + min }), evidence: [], trail: [] } as unknown as ProposalDetail;
    store.setState({ user: { name: 'kari', roles: ['shift_lead'] }, selected: waiting });
    store.getState().showInboxView('decided');
    expect(store.getState().selected).toBeNull();
    store.setState({ selected: decided });
    store.getState().showInboxView('decided');
    expect(store.getState().selected?.id).toBe('P-1');
    store.getState().showInboxView('waiting');
    expect(store.getState().selected).toBeNull();
    await flush();
  });

  it('follows the inbox while shown: read again on every change the site pushes, not while the waiting list is shown', async () => {
    const first = view('P-1', { decidedBy: 'kari', decidedMs: T + min, command: { module: 'operations', progress: 'sent', updatedMs: T + min } });
    const carried = { ...first, command: { module: 'operations', progress: 'applied' as const, updatedMs: T + 2 * min } };
    const { api, asked } = site([first], [carried]);
    const store = createAppStore(api);
    store.setState({ user: { name: 'kari', roles: ['shift_lead'] }, screen: 'inbox' });
    store.getState().applyEvent({ type: 'proposals', changed: ['P-1'] });
    await flush();
    expect(asked.filter((r) => !r.status?.includes('open'))).toEqual([]); // the waiting list shown: not asked
    store.getState().showInboxView('decided');
    await flush();
    expect(store.getState().decided?.[0]?.command?.progress).toBe('sent');
    store.getState().applyEvent({ type: 'proposals', changed: ['P-1'] }); // the module said it applied it
    await flush();
    expect(store.getState().decided?.[0]?.command?.progress).toBe('applied');
    // Back to the inbox from another screen: read again too.
    store.getState().go('stock');
    store.getState().go('inbox');
    await flush();
    expect(asked.filter((r) => !r.status?.includes('open')).length).toBe(3);
  });

  it("shows when, what, the decision, who and the command's state, in the chosen language; each row a button that opens its panel", () => {
    const store = createAppStore({} as SiteApi);
    const decided = [
      view('P-1', { explanation: 'Job J-7 is due 2026-12-06T04:52:00.000Z. Start it on M-2.', decidedBy: 'kari', decidedMs: T + 12 * min, command: { module: 'operations', progress: 'acknowledged', updatedMs: T + 13 * min } }),
      view('P-2', { status: 'rejected', decidedBy: 'ola', decidedMs: T + 3 * min }),
      view('P-3', { status: 'stale', decidedBy: 'kari', decidedMs: T + 2 * min }),
    ];
    store.setState({ lang: 'en', inboxView: 'decided', decided, proposals: [view('P-9', { status: 'open' })], status: { nowMs: T + 15 * min } as never });
    const en = render(store);
    expect(en).toContain('<button aria-pressed="true">Decided</button>');
    expect(en).toContain('<h2>Decided, newest first</h2>');
    const rows = [...en.matchAll(/<tr[^>]*data-status="\w+"[^>]*>([\s\S]*?)<\/tr>/g)].map((m) => m[1]!.replace(/<[^>]+>/g, '|').replace(/\|+/g, '|'));
    expect(rows).toEqual([
      '|Sun 6 Dec, 05:12|Job J-7 is due Sun 6 Dec, 05:52. Start it on M-2.|Assignment|approved|kari|acknowledged by the module|',
      '|Sun 6 Dec, 05:03|Start P-2.|Assignment|rejected|ola|–|',
      '|Sun 6 Dec, 05:02|Start P-3.|Assignment|stale|kari|–|',
    ]);
    expect(en).toContain('data-decided="P-1"'); // not data-proposal: the waiting rows' focus and the e2e steps take those
    expect(en).not.toContain('data-proposal=');
    expect(en).toContain('Pick a decision in the list');
    const nb = render((store.setState({ lang: 'nb' }), store));
    expect(nb).toContain('<h2>Avgjort, nyeste først</h2>');
    expect(nb).toContain('godkjent');
    expect(nb).toContain('bekreftet av modulen');
    const de = render((store.setState({ lang: 'de' }), store));
    expect(de).toContain('<button aria-pressed="true">Entschieden</button>');
    expect(de).toContain('abgelehnt');
  });

  it('says when the list is cut, and says nothing was decided only once the site answered', () => {
    const store = createAppStore({} as SiteApi);
    store.setState({ lang: 'en', inboxView: 'decided', decided: null });
    expect(render(store)).toContain('<h2>Decided, newest first</h2>');
    store.setState({ decided: [] });
    expect(render(store)).toContain('<h2>Nothing decided yet.</h2>');
    store.setState({ decided: Array.from({ length: DECIDED_ROWS }, (_, i) => view(`P-${i}`, { decidedBy: 'kari', decidedMs: T - i * min })) });
    expect(render(store)).toContain('Only the newest decisions are listed (at most 200).');
    store.setState({ decided: [view('P-1', { decidedBy: 'kari', decidedMs: T })] });
    expect(render(store)).not.toContain('Only the newest');
  });
});

describe('the open proposal', () => {
  it('says when the agent read what its explanation says, and how long ago, by the site clock', () => {
    const p: ProposalDetail = { ...view('P-1', { status: 'open', createdMs: Date.UTC(2026, 11, 6, 4, 12) }), evidence: [], trail: [], failedBefore: [] };
    const store = createAppStore({} as SiteApi);
    store.setState({ lang: 'en', proposals: [p], selected: p, status: { nowMs: Date.UTC(2026, 11, 6, 4, 19) } as never });
    expect(render(store)).toContain('<p class="muted read-at">As the agent read it at Sun 6 Dec, 05:12, 7 mins ago.</p>');
    // The next status from the site: the age follows.
    store.setState({ status: { nowMs: Date.UTC(2026, 11, 6, 4, 31, 30) } as never });
    expect(render(store)).toContain('As the agent read it at Sun 6 Dec, 05:12, 19 mins 30 secs ago.');
    store.setState({ lang: 'nb' });
    expect(render(store)).toMatch(/Slik agenten leste det søn\. 6\. des\., 05:12, for 19 min 30 sek siden\./);
    store.setState({ lang: 'de' });
    expect(render(store)).toMatch(/So las es der Agent: So\., 6\. Dez\., 05:12, vor 19 Min\. 30 Sek\.(?!\.)/);
  });
});
