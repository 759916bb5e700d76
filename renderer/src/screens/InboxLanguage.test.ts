// A proposal's explanation, risk reason and stale reason in the chosen language (server-side
// markup, no browser): the site's translation where it sent one, the stored English otherwise;
// the English record stays on hover.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { inTimeZone } from '../testing/time-zone.ts';
import type { ProposalDetail, SiteApi } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { createAppStore, INBOX_ROWS } from '../store/store.ts';
import { Inbox } from './Inbox.tsx';

const T = Date.UTC(2026, 11, 1, 12, 0);
inTimeZone('Europe/Oslo');

const P: ProposalDetail = {
  id: 'P-1',
  status: 'open',
  action: 'escalate_job',
  module: 'operations',
  params: {},
  ruleId: 'escalate-late-job',
  ruleVersion: '2',
  risk: 'low',
  riskReason: "raises one job's priority by one",
  explanation: 'Job J-1 is released and due 2026-12-01T23:40:00.000Z. Raise its priority from 2.',
  translations: { nb: { explanation: 'Jobb J-1 er frigitt og har frist 2026-12-01T23:40:00.000Z. Hev prioriteten fra 2.', riskReason: 'hever prioriteten til én jobb med én' } },
  createdMs: T,
  evidence: [],
  trail: [],
  failedBefore: [],
};

function html(lang: 'en' | 'nb' | 'de', p: ProposalDetail = P): string {
  const store = createAppStore({} as SiteApi);
  // The site's clock, for the year: an instant of another year is shown with it (formatWhen).
  store.setState({ lang, proposals: [p], selected: p, status: { nowMs: T } as never });
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(Inbox)));
}

describe("an agent's explanation and risk reason", () => {
  it('are in Norwegian where the site sent a translation, in the list and the panel, with the time in local time', () => {
    const nb = html('nb');
    // In the work queue's short form (formatWhen), as the job's due time there.
    // The job's code kept whole (`KeepCodes`), as History keeps it.
    expect(nb).toContain('data-proposal="P-1">Jobb <span class="code">J-1</span> er frigitt og har frist ons. 2. des., 00:40. Hev prioriteten fra 2.</button>');
    expect(nb).toContain('aria-label="Jobb J-1 er frigitt');
    expect(nb).toMatch(/<p class="muted" title="raises one job&#x27;s priority by one">hever prioriteten til én jobb med én<\/p>/);
    // The stored English stays on the heading's hover: it is the record.
    expect(nb).toContain(`<h2 title="${P.explanation}">`);
    expect(nb).not.toMatch(/>Job J-1/);
  });

  it('are the stored English where no translation came (German here) and in English', () => {
    for (const lang of ['de', 'en'] as const) {
      const out = html(lang);
      expect(out, lang).toContain('>Job <span class="code">J-1</span> is released and due ');
      expect(out, lang).toContain('raises one job&#x27;s priority by one</p>');
      expect(out, lang).not.toContain('Jobb');
    }
  });

  it("say why an approval found it stale, in the alert and the trail; another language's reason stays English", () => {
    const reason = 'resource M-2 is now down';
    const stale: ProposalDetail = {
      ...P,
      status: 'stale',
      staleReason: reason,
      translations: { nb: { ...P.translations!.nb, staleReason: 'ressurs M-2 er nå ute av drift' } },
      trail: [{ atMs: T, event: 'stale', user: 'lena', detail: `reason: ${reason}`, fields: [{ name: 'reason', value: reason }] }],
    };
    const nb = html('nb', stale);
    expect(nb).toMatch(/<p role="alert" class="alert">⚠ [^<]*ressurs M-2 er nå ute av drift/);
    expect(nb).toMatch(/<ol class="trail">.*ressurs M-2 er nå ute av drift.*<\/ol>/);
    expect(nb).not.toContain(reason);
    const de = html('de', stale);
    expect(de).toMatch(/<p role="alert" class="alert">⚠ [^<]*resource M-2 is now down/);
  });

  it('say why the agent withdrew it, under its status', () => {
    const reason = 'job J-1 is now done (run 20261201-120000-000)';
    const withdrawn: ProposalDetail = {
      ...P,
      status: 'withdrawn',
      withdrawnReason: reason,
      translations: { de: { withdrawnReason: 'Auftrag J-1 ist jetzt erledigt (Lauf 20261201-120000-000)' } },
    };
    expect(html('de', withdrawn)).toContain('<p class="withdrawn">Vom Agenten zurückgezogen: Auftrag J-1 ist jetzt erledigt (Lauf 20261201-120000-000)</p>');
    expect(html('nb', withdrawn)).toContain(`<p class="withdrawn">Trukket av agenten: ${reason}</p>`);
    expect(html('en', P)).not.toContain('class="withdrawn"');
  });
});

describe('a long inbox', () => {
  /** The inbox with `listed` proposals listed (the last `listedDeferred` of them deferred) and the site's status counts. */
  function list(lang: 'en' | 'nb', listed: number, open: number, deferred: number, listedDeferred = 0): string {
    const store = createAppStore({} as SiteApi);
    const proposals = Array.from({ length: listed }, (_, i) => ({ ...P, id: `P-${i}`, status: i >= listed - listedDeferred ? ('deferred' as const) : ('open' as const) }));
    store.setState({ lang, proposals, selected: null, status: { proposals: { open, deferred } } as never });
    store.getInitialState = store.getState;
    return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(Inbox)));
  }

  it('counts every proposal that waits, deferred ones too, and says that the most urgent are listed', () => {
    // A full list (the site cut it at INBOX_ROWS): the site's count of all that wait.
    const en = list('en', INBOX_ROWS, 1250, 50, 4);
    expect(en).toContain('<h2 tabindex="-1">1,300 waiting for a decision, 50 of them deferred</h2>');
    expect(en).toContain('The 200 most urgent are listed, of 1,300 that wait: decide these first.');
    expect(list('nb', INBOX_ROWS, 1250, 50, 4)).toMatch(/<h2 tabindex="-1">1[\s\u00a0]300 venter på beslutning, 50 av dem utsatt<\/h2>/);
    expect(list('nb', INBOX_ROWS, 1250, 50)).toMatch(/De 200 mest hastende vises, av 1[\s\u00a0]300 som venter/);
    const all = list('en', 3, 3, 0);
    expect(all).toContain('<h2 tabindex="-1">3 waiting for a decision</h2>');
    expect(all).not.toContain('most urgent are listed');
  });

  it('says the number of rows listed while the list holds all that wait: deferred ones counted, a status not yet pushed after a decision no matter', () => {
    // Two open and one deferred listed; the heading counted the open ones only ("2 waiting") over three rows.
    expect(list('en', 3, 2, 1, 1)).toContain('<h2 tabindex="-1">3 waiting for a decision, 1 of them deferred</h2>');
    // One just decided here: the list is read again at once, the status comes every few seconds.
    const lagging = list('en', 2, 3, 0);
    expect(lagging).toContain('<h2 tabindex="-1">2 waiting for a decision</h2>');
    expect(lagging).not.toContain('most urgent are listed');
  });
});

describe('what approving sends', () => {
  it("names the command in the reader's language, with the identifier the module gets", () => {
    const render = (lang: 'en' | 'nb' | 'de', action: string) => {
      const store = createAppStore({} as SiteApi);
      store.setState({ lang, proposals: [{ ...P, action }], selected: { ...P, action }, user: { name: 'Lena', roles: ['shift_lead'] } });
      store.getInitialState = store.getState;
      return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(Inbox)));
    };
    expect(render('en', 'escalate_job')).toContain('<p class="will-send">Approving sends “Escalation” (escalate_job) to operations.</p>');
    expect(render('nb', 'escalate_job')).toContain('<p class="will-send">Godkjenning sender «Eskalering» (escalate_job) til operations.</p>');
    expect(render('de', 'assign_job')).toContain('<p class="will-send">Genehmigen sendet „Zuweisung“ (assign_job) an operations.</p>');
    // An action of a newer agent than this UI knows: as the agent named it.
    expect(render('en', 'move_pallet')).toContain('<p class="will-send">Approving sends “move_pallet” to operations.</p>');
  });

  it('says a notice (no module: door-down) sends nothing, instead of "sends … to ." naming no one', () => {
    const render = (lang: 'en' | 'de') => {
      const notice = { ...P, action: 'door_down', module: null };
      const store = createAppStore({} as SiteApi);
      store.setState({ lang, proposals: [notice], selected: notice, user: { name: 'Lena', roles: ['shift_lead'] } });
      store.getInitialState = store.getState;
      return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(Inbox)));
    };
    expect(render('en')).toContain('<p class="will-send">A notice: approving sends nothing to a module; it records that you saw to it.</p>');
    expect(render('de')).toContain('<p class="will-send">Ein Hinweis: Genehmigen sendet nichts an ein Modul; es hält fest, dass Sie sich darum gekümmert haben.</p>');
    expect(render('en')).not.toMatch(/sends “door_down”/);
  });
});
