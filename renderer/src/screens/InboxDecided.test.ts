// What was decided lately, on the Inbox screen (its Decided toggle): approved, rejected and stale
// proposals, and withdrawn ones (by when and why the agent withdrew them), the newest first, each
// with when, who, the decision and how far its command got — read from the site's listing, again
// on every change of the inbox while shown; Next there goes through that list. And the open
// proposal's panel says when the agent read what its explanation says; the empty waiting list says
// how often the agent looks and when it last did (the site's status). Server-side markup and a fake
// site API, no browser.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { inTimeZone } from '../testing/time-zone.ts';
import type { ProposalDetail, ProposalView, SiteApi, SiteApiMethods } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { createAppStore, DECIDED_ROWS, WITHDRAWN_ROWS, type AppStore } from '../store/store.ts';
import { Inbox } from './Inbox.tsx';

inTimeZone('Europe/Oslo'); // UTC+1 in December

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
      if (m === 'listProposals')
        return async (req: SiteApiMethods['listProposals']['req']) => {
          asked.push(req);
          if (req.status?.includes('open')) return [];
          // The Decided list's two reads (decided; withdrawn) of the same list, each its own part.
          const list = lists[Math.min(asked.filter((r) => r.status?.includes('approved')).length - 1, lists.length - 1)] ?? [];
          return list.filter((p) => (p.status === 'withdrawn') === req.status!.includes('withdrawn'));
        };
      return async () => [];
    },
  });
  return { api, asked };
}

const flush = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

/** The Decided list's rows as text, a cell's or a line's end as '|' (a code's span, `KeepCodes`, left out). */
const rowTexts = (html: string): string[] =>
  [...html.matchAll(/<tr[^>]*data-status="\w+"[^>]*>([\s\S]*?)<\/tr>/g)].map((m) => m[1]!.replace(/<\/?span[^>]*>/g, '').replace(/<[^>]+>/g, '|').replace(/\|+/g, '|'));

function render(store: AppStore): string {
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(Inbox)));
}

describe('the Decided list', () => {
  it('asks the site for the newest decisions (approved, rejected, stale) and withdrawals, bounded, and lists them in its order', async () => {
    // Made first, decided last (it waited deferred): the site sorts by decision (core/inbox order 'decided').
    const late = view('P-1', { createdMs: T - 60 * min, decidedBy: 'kari', decidedMs: T + 20 * min, command: { module: 'operations', progress: 'applied', updatedMs: T + 21 * min } });
    const early = view('P-2', { createdMs: T, status: 'rejected', decidedBy: 'ola', decidedMs: T + 5 * min });
    // Withdrawn between the two decisions: the two reads merged by when each left the waiting list.
    const gone = view('P-3', { status: 'withdrawn', withdrawnMs: T + 10 * min, withdrawnReason: 'job J-3 started' });
    const { api, asked } = site([late, gone, early]);
    const store = createAppStore(api);
    store.setState({ user: { name: 'kari', roles: ['shift_lead'] } });
    store.getState().showInboxView('decided');
    await flush();
    // Two cuts: a busy floor's withdrawals do not push the shift's decisions out of the list.
    expect(asked).toEqual([
      { status: ['approved', 'rejected', 'stale'], order: 'decided', limit: DECIDED_ROWS },
      { status: ['withdrawn'], order: 'decided', limit: WITHDRAWN_ROWS },
    ]);
    expect(store.getState().decided?.map((p) => p.id)).toEqual(['P-1', 'P-3', 'P-2']);
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
    expect(asked.filter((r) => r.status?.includes('approved')).length).toBe(3);
  });

  it("shows when, what, and the outcome (the decision, who, the command's state) in three columns, in the chosen language; each row a button that opens its panel", () => {
    const store = createAppStore({} as SiteApi);
    const decided = [
      view('P-1', { explanation: 'Job J-7 is due 2026-12-06T04:52:00.000Z. Start it on M-2.', decidedBy: 'kari', decidedMs: T + 12 * min, command: { module: 'operations', progress: 'acknowledged', updatedMs: T + 13 * min } }),
      view('P-2', { status: 'rejected', decidedBy: 'ola', decidedMs: T + 3 * min }),
      view('P-3', { status: 'stale', decidedBy: 'kari', decidedMs: T + 2 * min }),
      // Nobody decided it: when and why the agent withdrew it, in the reader's language.
      view('P-4', { status: 'withdrawn', withdrawnMs: T + min, withdrawnReason: 'job J-2 is no longer in the queue', translations: { nb: { withdrawnReason: 'jobb J-2 står ikke lenger i køen' } } }),
    ];
    store.setState({ lang: 'en', inboxView: 'decided', decided, showWithdrawn: true, proposals: [view('P-9', { status: 'open' })], status: { nowMs: T + 15 * min } as never });
    const en = render(store);
    expect(en).toContain('<button aria-pressed="true">Decided</button>');
    expect(en).toContain('<h2>Decided or withdrawn, newest first</h2>');
    // Three columns: beside the panel at 1280 px five left the proposal 110–145 px and cut German's last one.
    expect([...en.matchAll(/<th scope="col">([^<]*)<\/th>/g)].map((m) => m[1])).toEqual(['When', 'Proposal', 'Outcome']);
    expect(rowTexts(en)).toEqual([
      '|Sun 6 Dec, 05:12|Job J-7 is due Sun 6 Dec, 05:52. Start it on M-2.|Assignment|approved|kari|acknowledged by the module|',
      '|Sun 6 Dec, 05:03|Start P-2.|Assignment|rejected|ola|',
      '|Sun 6 Dec, 05:02|Start P-3.|Assignment|stale|kari|',
      '|Sun 6 Dec, 05:01|Start P-4.|Assignment|Withdrawn by the agent: job J-2 is no longer in the queue|withdrawn|the agent|',
    ]);
    expect(en).toContain('<td class="outcome"><div class="word">approved</div><div class="muted small">kari</div><div class="small command-acknowledged">acknowledged by the module</div></td>');
    expect(en).toContain('data-decided="P-1"'); // not data-proposal: the waiting rows' focus and the e2e steps take those
    expect(en).not.toContain('data-proposal=');
    expect(en).toContain('Pick a decision in the list');
    const nb = render((store.setState({ lang: 'nb' }), store));
    expect(nb).toContain('<h2>Avgjort eller trukket, nyeste først</h2>');
    expect(nb).toContain('Trukket av agenten: jobb <span class="code">J-2</span> står ikke lenger i køen');
    expect(nb).toContain('<div class="muted small">agenten</div>');
    expect(nb).toContain('godkjent');
    expect(nb).toContain('bekreftet av modulen');
    const de = render((store.setState({ lang: 'de' }), store));
    expect(de).toContain('<button aria-pressed="true">Entschieden</button>');
    expect(de).toContain('abgelehnt');
    expect(de).toContain('Vom Agenten zurückgezogen: job <span class="code">J-2</span> is no longer in the queue'); // no German text stored: the English
    expect(de).toContain('<div class="muted small">der Agent</div>');
    expect([...de.matchAll(/<th scope="col">([^<]*)<\/th>/g)].map((m) => m[1])).toEqual(['Wann', 'Vorschlag', 'Ergebnis']);
  });

  it('says when the list is cut, and says nothing was decided only once the site answered', () => {
    const store = createAppStore({} as SiteApi);
    store.setState({ lang: 'en', inboxView: 'decided', decided: null });
    expect(render(store)).toContain('<h2>Decided, newest first</h2>');
    expect(render(store)).not.toContain('name="withdrawn"'); // no count before the site says
    store.setState({ decided: [] });
    expect(render(store)).toContain('<h2>Nothing decided yet.</h2>');
    store.setState({ showWithdrawn: true });
    expect(render(store)).toContain('<h2>Nothing decided or withdrawn yet.</h2>');
    store.setState({ showWithdrawn: false });
    store.setState({ decided: Array.from({ length: DECIDED_ROWS }, (_, i) => view(`P-${i}`, { decidedBy: 'kari', decidedMs: T - i * min })) });
    expect(render(store)).toContain('Only the newest decisions are listed (at most 200).');
    store.setState({ decided: [view('P-1', { decidedBy: 'kari', decidedMs: T })] });
    expect(render(store)).not.toContain('Only the newest');
    // The withdrawn ones do not count toward the decisions' cut.
    store.setState({ decided: Array.from({ length: DECIDED_ROWS }, (_, i) => view(`P-${i}`, i % 2 ? { decidedBy: 'kari', decidedMs: T - i * min } : { status: 'withdrawn', withdrawnMs: T - i * min })) });
    expect(render(store)).not.toContain('Only the newest');
  });
});

describe('the withdrawn ones in the Decided list', () => {
  // Merged by when each left the waiting list: two withdrawals between the two decisions.
  const merged = [
    view('P-1', { decidedBy: 'kari', decidedMs: T + 12 * min }),
    view('P-2', { status: 'withdrawn', withdrawnMs: T + 10 * min, withdrawnReason: 'job J-2 started' }),
    view('P-3', { status: 'withdrawn', withdrawnMs: T + 8 * min, withdrawnReason: 'job J-3 started' }),
    view('P-4', { status: 'rejected', decidedBy: 'ola', decidedMs: T + 3 * min }),
  ];
  const ids = (html: string) => [...html.matchAll(/data-decided="([^"]+)"/g)].map((m) => m[1]);
  /** The box's [checked, words], or ['(no control)']. */
  const control = (html: string) => {
    const m = /<label class="filter">(<input type="checkbox" name="withdrawn"[^>]*>)([\s\S]*?)<\/label>/.exec(html);
    return m ? [m[1]!.includes('checked') ? ' checked=""' : undefined, m[2]!.replace(/<!-- -->/g, '').trim()] : ['(no control)'];
  };

  it('shows the decisions alone at first, and at the top a box saying how many were withdrawn; ticked, all in the merged order', () => {
    const store = createAppStore({} as SiteApi);
    store.setState({ lang: 'en', inboxView: 'decided', decided: merged, status: { nowMs: T + 15 * min } as never });
    let html = render(store);
    // 43 of 47 rows were withdrawals after 15 minutes of the demo, the lead's decisions ~14,000 px down.
    expect(ids(html)).toEqual(['P-1', 'P-4']);
    expect(html).toContain('<h2>Decided, newest first</h2>');
    expect(control(html)).toEqual([undefined, 'Also what the agent withdrew (2)']);
    // Above the rows: found without scrolling.
    expect(html.indexOf('name="withdrawn"')).toBeLessThan(html.indexOf('data-decided='));
    store.getState().setShowWithdrawn(true);
    html = render(store);
    expect(ids(html)).toEqual(['P-1', 'P-2', 'P-3', 'P-4']);
    expect(html).toContain('<h2>Decided or withdrawn, newest first</h2>');
    expect(control(html)).toEqual([' checked=""', 'Also what the agent withdrew (2)']);
    store.setState({ lang: 'nb' });
    expect(control(render(store))[1]).toBe('Også det agenten trakk tilbake (2)');
    store.setState({ lang: 'de' });
    expect(control(render(store))[1]).toBe('Auch was der Agent zurückgezogen hat (2)');
    // At their cut more may have been withdrawn: "50+".
    store.setState({ lang: 'en', decided: Array.from({ length: WITHDRAWN_ROWS }, (_, i) => view(`W-${i}`, { status: 'withdrawn', withdrawnMs: T - i * min })) });
    expect(control(render(store))[1]).toBe(`Also what the agent withdrew (${WITHDRAWN_ROWS}+)`);
    // Only withdrawn ones, hidden: no decision yet, the box says where the rest are.
    store.setState({ showWithdrawn: false, decided: merged.filter((p) => p.status === 'withdrawn') });
    html = render(store);
    expect(html).toContain('<h2>Nothing decided yet.</h2>');
    expect(control(html)[1]).toBe('Also what the agent withdrew (2)');
    expect(html).not.toContain('Pick a decision'); // nothing shown to pick
    store.setState({ decided: merged.filter((p) => p.status !== 'withdrawn') });
    expect(control(render(store))[1]).toBe('Also what the agent withdrew (0)');
  });

  it('remembers the choice for the session (the toggle, other screens), not for the next person', async () => {
    const { api } = site(merged);
    const store = createAppStore(api);
    store.setState({ user: { name: 'kari', roles: ['shift_lead'] }, screen: 'inbox' });
    expect(store.getState().showWithdrawn).toBe(false);
    store.getState().showInboxView('decided');
    store.getState().setShowWithdrawn(true);
    store.getState().showInboxView('waiting');
    store.getState().go('stock');
    store.getState().go('inbox');
    store.getState().showInboxView('decided');
    await flush();
    expect(store.getState().showWithdrawn).toBe(true);
    await store.getState().signOut();
    expect(store.getState().showWithdrawn).toBe(false);
  });

  it('lets go of a withdrawn one open when they are hidden', () => {
    const store = createAppStore({} as SiteApi);
    const detail = { ...merged[1]!, evidence: [], trail: [], failedBefore: [] } as ProposalDetail;
    store.setState({ inboxView: 'decided', decided: merged, showWithdrawn: true, selected: detail });
    store.getState().setShowWithdrawn(false);
    expect(store.getState().selected).toBeNull();
    const approved = { ...merged[0]!, evidence: [], trail: [], failedBefore: [] } as ProposalDetail;
    store.setState({ showWithdrawn: true, selected: approved });
    store.getState().setShowWithdrawn(false);
    expect(store.getState().selected?.id).toBe('P-1');
  });
});

describe('codes in the explanations of both lists', () => {
  it('keep whole (`KeepCodes`, as History): "Auftrag J-/0023", "ITEM-/015" broke at their hyphen', () => {
    const store = createAppStore({} as SiteApi);
    const text = 'Job J-0023 is blocked (material short: ITEM-015), but 337 ITEM-015 are available now. Release it.';
    store.setState({ lang: 'en', proposals: [view('P-9', { status: 'open', explanation: text })], status: { nowMs: T } as never });
    const keep = 'Job <span class="code">J-0023</span> is blocked (material short: <span class="code">ITEM-015</span>), but 337 <span class="code">ITEM-015</span> are available now. Release it.';
    expect(render(store)).toContain(`data-proposal="P-9">${keep}</button>`);
    store.setState({
      inboxView: 'decided',
      showWithdrawn: true,
      decided: [view('P-1', { status: 'withdrawn', explanation: text, withdrawnMs: T, withdrawnReason: 'job J-0023 is released now' })],
    });
    const html = render(store);
    expect(html).toContain(`data-decided="P-1">${keep}</button>`);
    expect(html).toContain('Withdrawn by the agent: job <span class="code">J-0023</span> is released now');
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

describe('Next in the Decided list', () => {
  const detail = (p: ProposalView): ProposalDetail => ({ ...p, evidence: [], trail: [], failedBefore: [] });
  const decided = [
    view('P-1', { decidedBy: 'kari', decidedMs: T + 3 * min }),
    view('P-2', { status: 'withdrawn', withdrawnMs: T + 2 * min, withdrawnReason: 'job J-2 is no longer in the queue' }),
    view('P-3', { status: 'rejected', decidedBy: 'ola', decidedMs: T + min }),
  ];

  it('goes to the next row of that list as shown (wrapping; past the withdrawn ones while hidden), not to the next waiting proposal', async () => {
    const opened: string[] = [];
    const api = new Proxy({} as SiteApi, {
      get(_t, m: string) {
        if (m === 'getProposal') return async ({ id }: { id: string }) => (opened.push(id), detail(decided.find((p) => p.id === id) ?? view(id, { status: 'open' })));
        return async () => [];
      },
    });
    const store = createAppStore(api);
    store.setState({ user: { name: 'kari', roles: ['shift_lead'] }, inboxView: 'decided', decided, proposals: [view('P-9', { status: 'open' })], selected: detail(decided[0]!) });
    await store.getState().selectNext(); // the withdrawn P-2 hidden: P-3
    await store.getState().selectNext(); // from the last row shown: the first again
    store.getState().setShowWithdrawn(true);
    await store.getState().selectNext();
    await store.getState().selectNext();
    await store.getState().selectNext(); // from the last row: the first again
    expect(opened).toEqual(['P-3', 'P-1', 'P-2', 'P-3', 'P-1']);
    // The waiting list's Next as before.
    store.setState({ inboxView: 'waiting', selected: null });
    await store.getState().selectNext();
    expect(opened.at(-1)).toBe('P-9');
  });

  it('keeps Next on the panel while the Decided list has another row, whatever waits', () => {
    const store = createAppStore({} as SiteApi);
    store.setState({ lang: 'en', user: { name: 'kari', roles: ['shift_lead'] }, inboxView: 'decided', decided, proposals: [], selected: detail(decided[0]!) });
    expect(render(store)).toContain('<div class="next-only"><button>Next →</button></div>');
    store.setState({ decided: [decided[0]!], proposals: [view('P-9', { status: 'open' })] });
    expect(render(store)).not.toContain('Next →');
    // Another row, but a withdrawn one and they are hidden: nowhere to go.
    store.setState({ decided: decided.slice(0, 2) });
    expect(render(store)).not.toContain('Next →');
    store.setState({ showWithdrawn: true });
    expect(render(store)).toContain('Next →');
  });
});

describe('a withdrawn proposal opened', () => {
  it('shows its evidence, no decision buttons, that the agent withdrew it, when and why', () => {
    const p: ProposalDetail = {
      ...view('P-2', { status: 'withdrawn', withdrawnMs: Date.UTC(2026, 11, 6, 4, 21, 5), withdrawnReason: 'job J-2 is no longer in the queue' }),
      evidence: [{ table: 'work_queue', snapshotId: 7, tag: 'agent-r1', rows: [{ job_id: 'J-2', status: 'released' }], types: { job_id: 'STRING', status: 'STRING' } }],
      trail: [],
      failedBefore: [],
    };
    const store = createAppStore({} as SiteApi);
    store.setState({ lang: 'en', user: { name: 'kari', roles: ['shift_lead'] }, inboxView: 'decided', decided: [p], selected: p, status: { nowMs: T + 30 * min } as never });
    const html = render(store);
    // When, in the list's form; to the second on hover.
    expect(html).toContain('<strong>Status:</strong> withdrawn — the agent, <time dateTime="2026-12-06T04:21:05.000Z" title="Sun, 6 Dec 2026, 05:21:05">Sun 6 Dec, 05:21</time>');
    expect(html).toContain('<p class="withdrawn">Withdrawn by the agent: job J-2 is no longer in the queue</p>');
    expect(html).toContain('work_queue: Snapshot 7, tag agent-r1');
    expect(html).toContain('J-2');
    expect(html).not.toMatch(/Approve|Reject|Defer/);
  });
});

describe('the empty inbox', () => {
  const empty = (lang: 'en' | 'nb' | 'de', agent: unknown, nowMs = T + 40_000) => {
    const store = createAppStore({} as SiteApi);
    store.setState({ lang, proposals: [], status: { nowMs, agent } as never });
    return render(store);
  };
  const looks = (html: string) => /<p class="muted agent-looks">(.*?)<\/p>/.exec(html)?.[1] ?? '(no line)';

  it("says how often the agent looks and when it last did, by the site's status and clock, in each language; not while proposals wait", () => {
    const agent = { intervalMs: 60_000, timer: true, lastRunMs: T };
    expect(empty('en', agent)).toContain('<h2 tabindex="-1">Nothing waits for a decision.</h2><p class="muted agent-looks">The agent looks every 1 min; last at Sun 6 Dec, 05:00, 40 secs ago.</p>');
    expect(looks(empty('nb', agent))).toBe('Agenten ser over gulvet med 1 min mellomrom; sist søn. 6. des., 05:00, for 40 sek siden.');
    expect(looks(empty('de', agent))).toBe('Der Agent prüft die Lage alle 1 Min.; zuletzt So., 6. Dez., 05:00, vor 40 Sek.');
    // config.json agent.intervalMs, as the site's status carries it; the age follows the next status.
    expect(looks(empty('en', { intervalMs: 15_000, timer: true, lastRunMs: T }, T + 12 * min + 5_000))).toBe('The agent looks every 15 secs; last at Sun 6 Dec, 05:00, 12 mins 5 secs ago.');
    const store = createAppStore({} as SiteApi);
    store.setState({ lang: 'en', proposals: [view('P-1', { status: 'open' })], status: { nowMs: T, agent } as never });
    expect(render(store)).not.toContain('agent-looks');
  });

  it('before its first run the interval alone; says plainly when the agent does not run on its own; nothing before the status says', () => {
    expect(looks(empty('en', { intervalMs: 60_000, timer: true, lastRunMs: null }))).toBe('The agent looks every 1 min; it has not finished a look since the site started.');
    expect(looks(empty('nb', { intervalMs: 60_000, timer: true, lastRunMs: null }))).toBe('Agenten ser over gulvet med 1 min mellomrom; den har ikke gjort seg ferdig med en runde siden anlegget startet.');
    expect(looks(empty('de', { intervalMs: 60_000, timer: true, lastRunMs: null }))).toBe('Der Agent prüft die Lage alle 1 Min.; seit dem Start des Standorts hat er noch keine Prüfung abgeschlossen.');
    // A site started without the agent's timers (tilstand start --no-agent-timer): no interval claimed.
    const off = looks(empty('en', { intervalMs: 60_000, timer: false, lastRunMs: null }));
    expect(off).toBe('The agent does not run on its own on this site (started without its timer): it looks only when someone runs it.');
    expect(looks(empty('en', { intervalMs: 60_000, timer: false, lastRunMs: T }))).toBe(`${off} Last at Sun 6 Dec, 05:00, 40 secs ago.`);
    expect(looks(empty('nb', { intervalMs: 60_000, timer: false, lastRunMs: null }))).toMatch(/^Agenten går ikke av seg selv på dette anlegget/);
    expect(looks(empty('de', { intervalMs: 60_000, timer: false, lastRunMs: T }))).toMatch(/^Der Agent läuft an diesem Standort nicht von selbst .*Zuletzt So\., 6\. Dez\., 05:00, vor 40 Sek\.$/);
    // No status yet, or one without the agent (an older site): no line, rather than a wrong interval.
    const store = createAppStore({} as SiteApi);
    store.setState({ lang: 'en', proposals: [] });
    expect(render(store)).toContain('<h2 tabindex="-1">Nothing waits for a decision.</h2>');
    expect(render(store)).not.toContain('agent-looks');
    expect(empty('en', undefined)).not.toContain('agent-looks');
  });
});
