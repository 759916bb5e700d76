// What a shift lead's hour on the floor PC found, rendered to markup (no browser; the same checks
// in chromium are in test/e2e/floor-ui-shift.e2e.test.ts):
// - the open proposal's decision (what approving sends, the comment, Approve / Reject / Defer)
//   comes before the evidence, which at 1366 × 768 pushed the buttons below the fold;
// - the error line has a button to close it (a click on its text was no cue and no key);
// - a search or filter that matches nothing says so (Stock, Work queue), where an empty table
//   looked like a screen still loading;
// - the reorder levels and a new PIN or password are checked by their rules before they are sent
//   (the site refuses them in English, naming config keys or "password" under a PIN field);
// - a dead letter's reason is said in words in each language (it was the code alone, bad_json).
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { DeadLetterView, EvidenceTable, ProposalDetail, SiteApi, StockView } from '../../../core/site/api.ts';
import { App } from '../App.tsx';
import { StoreContext } from '../context.tsx';
import { translate, type Lang } from '../i18n/messages.ts';
import { createAppStore, type AppState } from '../store/store.ts';
import { DeadLetters } from './DeadLetters.tsx';
import { Inbox } from './Inbox.tsx';
import { levelsOk, Stock } from './Stock.tsx';
import { secretLengthOk } from './Users.tsx';
import { WorkQueue } from './WorkQueue.tsx';

function render(component: () => unknown, state: Partial<AppState>): string {
  const store = createAppStore({} as SiteApi);
  store.setState({ user: { name: 'Lena', roles: ['shift_lead'] }, ...state });
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(component as () => null)));
}

const evidence: EvidenceTable = {
  table: 'work_queue',
  snapshotId: 12,
  tag: 'agent-1',
  rows: [{ job_id: 'J-1', status: 'released' }],
  types: {},
} as EvidenceTable;

const P: ProposalDetail = {
  id: 'P-1', status: 'open', action: 'assign_job', module: 'operations', params: {}, ruleId: 'assign-job', ruleVersion: '4', risk: 'low',
  riskReason: 'reversible', explanation: 'Job J-1 is released and waiting; M-1 is free. Start it there.', createdMs: 1,
  evidence: [evidence, { ...evidence, table: 'resources' }], trail: [], failedBefore: [],
};

describe("the open proposal's decision", () => {
  it.each(['en', 'nb', 'de'] as Lang[])('comes before what the agent saw, in %s', (lang) => {
    const html = render(Inbox, { lang, proposals: [P], selected: P });
    const panel = html.slice(html.indexOf('<section class="proposal"'));
    const at = (needle: string) => {
      const i = panel.indexOf(needle);
      expect(i, needle).toBeGreaterThan(0);
      return i;
    };
    const evidenceAt = at('<div class="evidence">');
    expect(at('<p class="will-send">')).toBeLessThan(evidenceAt);
    expect(at('<textarea name="comment"')).toBeLessThan(evidenceAt);
    expect(at('<div class="actions">')).toBeLessThan(evidenceAt);
  });
});

describe('the error line', () => {
  it.each([
    ['en', 'Close'],
    ['nb', 'Lukk'],
    ['de', 'Schließen'],
  ] as Array<[Lang, string]>)('has a button that closes it, named in %s', (lang, name) => {
    const html = render(App, { lang, firstRun: { initialized: true, siteId: 'demo' } as AppState['firstRun'], error: 'sign in first' });
    expect(html).toMatch(new RegExp(`<p role="alert" class="error"><span>[^<]*sign in first</span><button type="button" class="close-error" aria-label="${name}" title="${name}">✖</button></p>`));
  });
});

const stockRow: StockView = {
  item: 'ITEM-001', location: 'A-01', on_hand: 30, reserved: 4, inbound: 0, available: 26, projected: 26, reorder_point: 5, order_up_to: 20,
  reorder_scope: 'default', reorder_set: null, item_policy: null, below_reorder_point: false, waiting: [],
};

describe('a search that matches nothing', () => {
  it('says so on the Stock screen, for a search or the below filter, in the language', () => {
    expect(render(Stock, { lang: 'nb', stock: [], stockSearch: 'NOPE', stockFiltered: true })).toContain('<p class="muted no-rows">Ingen rader passer.</p>');
    expect(render(Stock, { lang: 'de', stock: [], stockBelow: true, stockFiltered: true })).toContain('<p class="muted no-rows">Keine passenden Zeilen.</p>');
    // Rows found, or nothing asked for (a screen not yet loaded): no such line.
    expect(render(Stock, { lang: 'en', stock: [stockRow], stockSearch: 'ITEM', stockFiltered: true })).not.toContain('no-rows');
    expect(render(Stock, { lang: 'en', stock: [] })).not.toContain('no-rows');
  });

  it('says so on the Work queue screen', () => {
    expect(render(WorkQueue, { lang: 'en', jobs: [], workSearch: 'J-9999', workShownSearch: 'J-9999' })).toContain('<p class="muted no-rows">No rows match.</p>');
    expect(render(WorkQueue, { lang: 'en', jobs: [] })).not.toContain('no-rows');
  });
});

describe('the rules a form checks before it sends', () => {
  it('order up to must be above the reorder point', () => {
    expect(levelsOk('10', '5')).toBe(false);
    expect(levelsOk('10', '10')).toBe(false);
    expect(levelsOk('10', '11')).toBe(true);
    expect(levelsOk('9', '30')).toBe(true);
    // An empty field is the form's `required` to say.
    expect(levelsOk('', '5')).toBe(true);
  });

  it('a PIN has 4 to 12 digits, a password 8 characters or more', () => {
    for (const ok of ['0451', '123456789012', 'abcdefgh', '1234567890123', 'pass word']) expect(secretLengthOk(ok), ok).toBe(true);
    for (const bad of ['12', '123', 'abc', 'abcdefg', '12ab']) expect(secretLengthOk(bad), bad).toBe(false);
  });
});

const letter: DeadLetterView = {
  id: '11', reason: 'bad_json', detail: 'payload is not JSON', topic: 'tilstand/demo/events/inventory/stock', payload: 'hello', receivedMs: 1, status: 'open', dismissed: null,
};

describe("a dead letter's reason", () => {
  it.each([
    ['en', 'not JSON'],
    ['nb', 'ikke JSON'],
    ['de', 'kein JSON'],
  ] as Array<[Lang, string]>)('is said in words in %s, the code beside it', (lang, words) => {
    const html = render(DeadLetters, { lang, deadLetters: [letter] });
    expect(html).toContain(`<strong>${words}</strong><span class="mono small reason-code"> bad_json</span>`);
  });

  it('is shown as it came when this UI does not know it (a newer site)', () => {
    const html = render(DeadLetters, { lang: 'nb', deadLetters: [{ ...letter, reason: 'from_the_future' }] });
    expect(html).toContain('<strong>from_the_future</strong>');
    expect(html).not.toContain('reason-code');
  });
});

describe("the History screen's words for a tag", () => {
  it.each(['en', 'nb', 'de'] as Lang[])('are one word in %s: the kind picked and the search under it', (lang) => {
    // Norwegian said "Merke" in the picker and "Taggnavnet inneholder" under it.
    const word = translate(lang, 'history.tag').toLowerCase();
    expect(translate(lang, 'history.tagSearch').toLowerCase()).toContain(word);
  });
});
