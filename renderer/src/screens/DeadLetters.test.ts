// The Dead letters screen rendered from the store's state (server-side markup, no browser): a
// shift lead or an admin gets Dismiss on each open letter, an operator does not; anyone but a
// viewer gets Replay all and, in an open letter's row, replay of it and those like it; a dismissed
// letter says who closed it, when and why, in the chosen language. Dismissing in the row is driven
// in chromium (test/e2e/floor-ui.e2e.test.ts).
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { DeadLetterView, Role, SiteApi } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { createAppStore } from '../store/store.ts';
import { DeadLetters } from './DeadLetters.tsx';

const AT = Date.UTC(2026, 11, 3, 9, 30);
const LETTERS: DeadLetterView[] = [
  { id: '11', reason: 'bad_json', detail: 'payload is not JSON', topic: 'tilstand/demo/events/inventory/stock', payload: '{oops', receivedMs: AT, status: 'open', dismissed: null },
  { id: '12', reason: 'contract_violation', detail: 'after.qty: missing', topic: 'tilstand/demo/events/inventory/stock', payload: '{}', receivedMs: AT, status: 'dismissed', dismissed: { by: 'Lena', atMs: AT + 60_000, note: 'vendor test' } },
  { id: '13', reason: 'no_contract', detail: "contract 'inventory.stock' v2 is not registered", topic: 'tilstand/demo/events/inventory/stock', payload: '{}', receivedMs: AT, status: 'replayed', dismissed: null },
];

function render(role: Role, lang: 'en' | 'nb' | 'de' = 'en', openAtSite: number | null = null, o: { letters?: DeadLetterView[]; keepClosedMs?: number; busy?: boolean } = {}): string {
  const letters = o.letters ?? LETTERS;
  const store = createAppStore({ deadLetters: async () => letters } as unknown as SiteApi);
  const status = { ...(openAtSite !== null ? { deadLetters: openAtSite } : {}), ...(o.keepClosedMs !== undefined ? { deadLetterClosedRetentionMs: o.keepClosedMs } : {}) };
  store.setState({ deadLetters: letters, lang, user: { name: 'Someone', roles: [role] }, ...(Object.keys(status).length > 0 ? { status: status as never } : {}), ...(o.busy ? { deadLettersBusy: true } : {}) });
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(DeadLetters)));
}

const rowOf = (html: string, id: string): string => {
  const m = new RegExp(`<tr data-letter="${id}"[^>]*>.*?</tr>`).exec(html);
  expect(m, `letter ${id}'s row`).not.toBeNull();
  return m![0];
};

describe('Dead letters screen', () => {
  it('says when more letters are open at the site than are listed (the oldest open ones come first)', () => {
    // One listed: the singular (pluralKey), not "the oldest 1 open letters".
    expect(render('viewer', 'en', 1250)).toContain('The oldest open letter is listed, of 1,250: replay or dismiss it, and the next ones show.');
    expect(render('viewer', 'de', 1250)).toContain('Das älteste offene Ereignis wird gezeigt, von 1.250');
    expect(render('viewer', 'nb', 1250)).toContain('Den eldste åpne hendelsen vises, av 1\u00a0250');
    expect(render('viewer', 'en', 1)).not.toContain('rows-cut');
    expect(render('viewer')).not.toContain('rows-cut');
  });

  it('says how long a replayed or dismissed letter stays, when the site deletes them and some are listed', () => {
    const month = 30 * 86_400_000;
    expect(render('viewer', 'en', null, { keepClosedMs: month })).toContain('<p class="muted retention">A replayed or dismissed letter is deleted 30 days after it was closed.</p>');
    expect(render('viewer', 'nb', null, { keepClosedMs: month })).toContain('slettes 30 d etter at den ble lukket.');
    expect(render('viewer', 'de', null, { keepClosedMs: month })).toContain('wird 30 Tg. nach dem Schließen gelöscht.');
    // Kept for good (0), or only open letters listed: nothing to say.
    expect(render('viewer', 'en', null, { keepClosedMs: 0 })).not.toContain('retention');
    expect(render('viewer', 'en', null, { keepClosedMs: month, letters: LETTERS.filter((l) => l.status === 'open') })).not.toContain('retention');
  });

  it('offers Dismiss on open letters to a shift lead and an admin, not to an operator', () => {
    for (const role of ['shift_lead', 'admin'] as const) {
      const html = render(role);
      expect(rowOf(html, '11')).toContain('>Dismiss</button>');
      expect(rowOf(html, '12')).not.toContain('>Dismiss</button>');
      expect(rowOf(html, '13')).not.toContain('>Dismiss</button>');
    }
    expect(render('operator')).not.toContain('>Dismiss</button>');
    // Replay: anyone but a viewer (the site refuses a viewer's).
    expect(render('operator')).toContain('>Replay all open</button>');
    expect(render('viewer')).not.toContain('Replay all open');
    // In an open letter's row: replay it and every open one like it (its topic and reason).
    for (const role of ['operator', 'shift_lead', 'admin'] as const) {
      const html = render(role);
      expect(rowOf(html, '11')).toMatch(/<button class="replay-alike" title="Every open letter from this topic with this reason, listed here or not[^"]*">Replay this and every open one like it<\/button>/);
      expect(rowOf(html, '12')).not.toContain('replay-alike');
      expect(rowOf(html, '13')).not.toContain('replay-alike');
    }
    expect(render('viewer')).not.toContain('replay-alike');
    expect(rowOf(render('operator', 'nb'), '11')).toContain('>Kjør denne og alle åpne like den på nytt</button>');
    expect(rowOf(render('operator', 'de'), '11')).toContain('>Dieses und alle gleichartigen offenen erneut verarbeiten</button>');
  });

  it('says who dismissed a letter, when and why; an open one stands out, a closed one does not', () => {
    const html = render('operator');
    expect(rowOf(html, '12')).toMatch(/Dismissed by Lena, [^:]+:\d\d.*: vendor test/);
    expect(rowOf(html, '13')).toContain('Replayed');
    expect(rowOf(html, '11')).toContain('class="attention"');
    expect(rowOf(html, '12')).not.toContain('attention');
    expect(rowOf(render('admin', 'nb'), '12')).toContain('Avskrevet av Lena');
    expect(rowOf(render('admin', 'de'), '11')).toContain('>Verwerfen</button>');
  });

  it('marks Replay aria-disabled while a replay or dismissal is on its way (a double tap would say "replayed 0"), and not after', () => {
    const busy = render('shift_lead', 'en', null, { busy: true });
    // aria-disabled, not disabled, which would drop the keyboard focus to the page; a row's replay too.
    expect(busy).toMatch(/<button class="primary" aria-disabled="true">Replay all open<\/button>/);
    expect(rowOf(busy, '11')).toMatch(/<button class="replay-alike" title="[^"]*" aria-disabled="true">/);
    expect(rowOf(busy, '11')).not.toContain('disabled=""');
    const idle = render('shift_lead');
    expect(idle).toMatch(/<button class="primary">Replay all open<\/button>/);
    expect(rowOf(idle, '11')).not.toContain('disabled');
  });
});
