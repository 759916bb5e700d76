// An approval the inbox learnt of from the module's ack alone, after a restore lost it with the old
// PC (core/inbox `approvalNotOnRecord`): approved by "?", and its trail entry's reason is the site's
// English ("not on record: module … answered the command of …"). The floor's words say it in the
// chosen language: in Norwegian and German the English sentence stood in the trail, the one place
// that says what "?" means.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { inTimeZone } from '../testing/time-zone.ts';
import type { ProposalDetail, SiteApi } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { createAppStore } from '../store/store.ts';
import { Inbox } from './Inbox.tsx';

const T = Date.UTC(2026, 11, 1, 12, 0);
inTimeZone('Europe/Oslo');

const REASON = 'not on record: module operations answered the command of P-1, approved before the site was restored from an earlier state (its approval lost with the PC); who approved it and when are not known';

const P: ProposalDetail = {
  id: 'P-1',
  status: 'approved',
  action: 'escalate_job',
  module: 'operations',
  params: {},
  ruleId: 'escalate-late-job',
  ruleVersion: '2',
  risk: 'low',
  riskReason: "raises one job's priority by one",
  explanation: 'Job J-1 is released. Raise its priority from 2.',
  createdMs: T - 3_600_000,
  decidedBy: '?',
  decidedMs: T,
  evidence: [],
  trail: [
    { atMs: T - 3_600_000, event: 'proposed', user: 'agent-r1', detail: '', fields: [] },
    { atMs: T, event: 'approved', user: '?', detail: `reason: ${REASON}`, fields: [{ name: 'reason', value: REASON }] },
  ],
  failedBefore: [],
};

function html(lang: 'en' | 'nb' | 'de', p: ProposalDetail = P): string {
  const store = createAppStore({} as SiteApi);
  store.setState({ lang, proposals: [p], selected: p, status: { nowMs: T } as never });
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(Inbox)));
}

describe('an approval not on record (approved by "?") in the trail', () => {
  it('says why in the chosen language', () => {
    const nb = html('nb');
    expect(nb).toMatch(/<ol class="trail">.*ikke registrert: modulen svarte på kommandoen.*<\/ol>/);
    expect(nb).not.toContain('not on record');
    const de = html('de');
    expect(de).toMatch(/<ol class="trail">.*nicht erfasst: Das Modul hat auf den Befehl geantwortet.*<\/ol>/);
    expect(de).not.toContain('not on record');
    expect(html('en')).toMatch(/<ol class="trail">.*not on record: the module answered its command.*<\/ol>/);
  });

  it("a person's approval with a reason of its own is as it came", () => {
    const named: ProposalDetail = { ...P, decidedBy: 'lena', trail: [{ ...P.trail[1]!, user: 'lena', detail: 'reason: x', fields: [{ name: 'reason', value: 'x' }] }] };
    expect(html('nb', named)).not.toContain('ikke registrert');
  });
});
