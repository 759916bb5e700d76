// Without the decision buttons the panel keeps a way on: after an approval or a rejection (and for
// whoever may not decide) "Next →" stays, as on a touch screen it is the only one. Someone who may
// not decide is told why there are no buttons, with the name and role they are signed in with;
// the header says the role too. Server-side markup, no browser.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { ProposalDetail, ProposalView, Role, SiteApi } from '../../../core/site/api.ts';
import { App } from '../App.tsx';
import { StoreContext } from '../context.tsx';
import { signedInText, type Lang } from '../i18n/messages.ts';
import { createAppStore } from '../store/store.ts';
import { Inbox } from './Inbox.tsx';

const T = Date.UTC(2026, 11, 6, 5, 0);
const view = (id: string, status: ProposalView['status'] = 'open'): ProposalView => ({
  id, status, action: 'assign_job', module: 'operations', params: {}, ruleId: 'assign-job', ruleVersion: '1', risk: 'low', riskReason: 'reversible', explanation: `Start ${id}.`, createdMs: T,
});

function panel(o: { lang?: Lang; status?: ProposalView['status']; roles?: Role[]; others?: string[] }): string {
  const p: ProposalDetail = { ...view('P-1', o.status ?? 'open'), evidence: [], trail: [], failedBefore: [] };
  const store = createAppStore({} as SiteApi);
  const listed = (o.others ?? ['P-2']).map((id) => view(id));
  store.setState({ lang: o.lang ?? 'en', user: { name: 'vic', roles: o.roles ?? ['shift_lead'] } as never, proposals: p.status === 'open' || p.status === 'deferred' ? [view('P-1', p.status), ...listed] : listed, selected: p });
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(Inbox)));
}
// Its "Back to the list" left out: it is there whatever the status (shown only in one column).
const buttons = (html: string): string[] => [...html.matchAll(/<section class="proposal"[\s\S]*?$/g)].flatMap((m) => [...m[0].matchAll(/<button(?![^>]*back-to-list)[^>]*>([^<]*)<\/button>/g)].map((b) => b[1]!.trim()));
const note = (html: string): string | undefined => /<p class="not-decider" role="note">([^<]*)<\/p>/.exec(html)?.[1];

describe('the panel without decision buttons', () => {
  it('keeps Next after an approval or a rejection while another proposal waits; none when nothing else is listed', () => {
    expect(buttons(panel({ status: 'open' }))).toEqual(['✔ Approve', '✖ Reject', '‖ Defer', 'Next →']);
    expect(buttons(panel({ status: 'approved' }))).toEqual(['Next →']);
    expect(buttons(panel({ status: 'rejected' }))).toEqual(['Next →']);
    expect(buttons(panel({ status: 'stale' }))).toEqual(['Next →']);
    expect(buttons(panel({ status: 'approved', others: [] }))).toEqual([]);
  });

  it('tells a viewer or an operator why there are no buttons, with their name and role, in each language; keeps Next', () => {
    const viewer = panel({ roles: ['viewer'] });
    expect(buttons(viewer)).toEqual(['Next →']);
    expect(note(viewer)).toBe('Only a shift lead or an admin decides; you are signed in as vic (Viewer).');
    expect(note(panel({ roles: ['operator'], lang: 'nb' }))).toBe('Bare en skiftleder eller en administrator bestemmer; du er innlogget som vic (operatør).');
    expect(note(panel({ roles: ['viewer'], lang: 'de', status: 'deferred' }))).toBe('Nur eine Schichtleitung oder ein Administrator entscheidet; Sie sind angemeldet als vic (Betrachter).');
    // A decider is not told; nor is anyone on a proposal that is decided already.
    expect(note(panel({ roles: ['shift_lead'] }))).toBeUndefined();
    expect(note(panel({ roles: ['viewer'], status: 'approved' }))).toBeUndefined();
  });

  it('the header says the role beside the name', () => {
    expect(signedInText('en', { name: 'vic', roles: ['viewer'] })).toBe('Signed in as vic (Viewer)');
    expect(signedInText('nb', { name: 'lena', roles: ['shift_lead', 'admin'] })).toBe('Innlogget som lena (skiftleder, administrator)');
    expect(signedInText('de', { name: 'vic', roles: ['viewer'] })).toBe('Angemeldet als vic (Betrachter)');
    expect(signedInText('en', { name: 'vic', roles: [] })).toBe('Signed in as vic');
    // App's header (components: App.tsx) shows it.
    const store = createAppStore({} as SiteApi);
    store.setState({ lang: 'nb', user: { name: 'vic', roles: ['viewer'] }, firstRun: { initialized: true, siteId: 'demo' } as never });
    store.getInitialState = store.getState;
    const html = renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(App)));
    expect(/<header>[\s\S]*<\/header>/.exec(html)![0]).toContain('<span class="muted">Innlogget som vic (leser)</span>');
  });
});
