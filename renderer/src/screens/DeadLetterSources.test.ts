// The Dead letters screen says, above its list, where the open letters come from: the list shows
// the oldest few, and with 5,000 letters of one stream and 2 of another only the first stream's
// are on screen. The five largest groups of one topic and reason, the reason in words and the
// topic as module/stream, and how many letters the other groups hold.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { DeadLetterGroupView, DeadLetterView, SiteApi } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { createAppStore } from '../store/store.ts';
import { DeadLetters } from './DeadLetters.tsx';

const topic = (module: string, stream: string) => `tilstand/demo/events/${module}/${stream}`;
const LETTER: DeadLetterView = { id: '11', reason: 'bad_json', detail: 'payload is not JSON', topic: topic('inventory', 'stock'), payload: '{oops', receivedMs: 0, status: 'open', dismissed: null };
const GROUPS: DeadLetterGroupView[] = [
  { topic: topic('inventory', 'stock'), reason: 'no_contract', count: 5000 },
  { topic: topic('inventory', 'stock'), reason: 'bad_json', count: 40 },
  { topic: topic('operations', 'jobs'), reason: 'contract_violation', count: 7 },
  { topic: topic('commerce', 'orders'), reason: 'from_the_future', count: 4 },
  { topic: topic('inventory', 'counts'), reason: 'no_binding', count: 3 },
  { topic: topic('operations', 'resources'), reason: 'bad_json', count: 2 },
  { topic: topic('commerce', 'reservations'), reason: 'bad_json', count: 1 },
];

function sourcesHtml(lang: 'en' | 'nb' | 'de', groups: DeadLetterGroupView[], deadLetterFilter: { topic: string; reason: string } | null = null): string | undefined {
  const store = createAppStore({} as SiteApi);
  store.setState({ deadLetters: [LETTER], deadLetterGroups: groups, deadLetterFilter, deadLettersReadWith: deadLetterFilter, lang, user: { name: 'Someone', roles: ['viewer'] } });
  store.getInitialState = store.getState;
  const html = renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(DeadLetters)));
  return /<div class="letter-sources">(.*?)<\/div>/s.exec(html)?.[1];
}

/** The summary's lead-in and its lines, as text. */
function summary(lang: 'en' | 'nb' | 'de', groups: DeadLetterGroupView[]): string[] {
  const at = sourcesHtml(lang, groups);
  if (at === undefined) return [];
  return [at.replace(/<ul>.*/s, ''), ...[...at.matchAll(/<li[^>]*>(.*?)<\/li>/gs)].map((m) => m[1]!.replace(/<[^>]+>/g, ''))];
}

describe('Dead letters screen: where the open letters come from', () => {
  it('names the five largest groups in words, module/stream, and the rest as "and N more", in en and nb', () => {
    expect(summary('en', GROUPS)).toEqual([
      'Open letters come from',
      '5,000 unknown contract from inventory/stock',
      '40 not JSON from inventory/stock',
      '7 does not match its contract from operations/jobs',
      // A reason from a newer site, as it came.
      '4 from_the_future from commerce/orders',
      '3 no binding for the topic from inventory/counts',
      'and 3 more',
    ]);
    const nb = summary('nb', GROUPS);
    expect(nb[0]).toBe('Åpne hendelser kommer fra');
    expect(nb[1]).toMatch(/^5\s000 ukjent kontrakt fra inventory\/stock$/);
    expect(nb.slice(2)).toEqual(['40 ikke JSON fra inventory/stock', '7 stemmer ikke med kontrakten fra operations/jobs', '4 from_the_future fra commerce/orders', '3 ingen binding for emnet fra inventory/counts', 'og 3 til']);
    expect(summary('de', GROUPS).at(-1)).toBe('und 3 weitere');
  });

  it('has no "more" line with five groups or fewer, and no summary when no letter is open', () => {
    expect(summary('en', GROUPS.slice(0, 5))).toHaveLength(6);
    expect(summary('en', GROUPS.slice(0, 5)).join('\n')).not.toContain('more');
    expect(summary('en', [])).toEqual([]);
    // One letter more: the singular.
    const oneMore = [...GROUPS.slice(0, 5), { topic: topic('commerce', 'orders'), reason: 'bad_json', count: 1 }];
    expect([summary('en', oneMore).at(-1), summary('nb', oneMore).at(-1), summary('de', oneMore).at(-1)]).toEqual(['and one more', 'og én til', 'und ein weiteres']);
  });

  it('words each group as a button that filters the list (aria-pressed), the chosen one pressed, with "Show all" beside', () => {
    const html = sourcesHtml('en', GROUPS)!;
    expect(html.match(/<button type="button" class="source" aria-pressed="false">/g)).toHaveLength(5);
    expect(html).not.toContain('show-all');
    const chosen = sourcesHtml('de', GROUPS, { topic: GROUPS[2]!.topic, reason: GROUPS[2]!.reason })!;
    expect(chosen.match(/aria-pressed="true"/g)).toHaveLength(1);
    expect(chosen).toContain('<button type="button" class="source" aria-pressed="true">7 passt nicht zum Vertrag von operations/jobs</button>');
    expect(chosen).toContain('Nur die Ereignisse von operations/jobs aufgelistet (passt nicht zum Vertrag).</span> <button type="button" class="show-all">Alle zeigen</button>');
    // In Norwegian too.
    expect(sourcesHtml('nb', GROUPS, { topic: GROUPS[2]!.topic, reason: GROUPS[2]!.reason })).toContain('>Vis alle</button>');
  });

  it('is loaded with the list when the screen loads', async () => {
    const store = createAppStore({ deadLetters: async () => [LETTER], deadLetterGroups: async () => GROUPS.slice(0, 2) } as unknown as SiteApi);
    await store.getState().loadDeadLetters();
    expect(store.getState().deadLetterGroups).toEqual(GROUPS.slice(0, 2));
    expect(store.getState().deadLetters).toEqual([LETTER]);
  });
});
