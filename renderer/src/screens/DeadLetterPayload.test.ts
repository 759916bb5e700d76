// The Dead letters screen's payload and dismissal note (server-side markup, no browser): a payload
// that is JSON is indented in a block that scrolls past 20 lines — it was one raw line, then a block
// of 12 that ended before the yard letters' state —, its codes and times kept whole, the
// text re-indented, not parsed and written again (a number or an escape stays as sent); one that is
// not JSON is shown verbatim (a dead letter may be malformed bytes). The dismissal's form is a row
// of its own across the table, its note field growing to the row's width (it was about 250 px in
// the letter's last cell). The focus after a dismissal in chromium: test/e2e/floor-ui-robust.e2e.test.ts.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { DeadLetterView, SiteApi } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { createAppStore } from '../store/store.ts';
import { DeadLetters, DismissRow, prettyPayload } from './DeadLetters.tsx';

const AT = Date.UTC(2026, 11, 3, 9, 30);
const letter = (id: string, payload: string): DeadLetterView => ({ id, reason: 'contract_violation', detail: 'after.state: not one of free, occupied, blocked', topic: 'tilstand/demo/events/yard/doors', payload, receivedMs: AT, status: 'open', dismissed: null });

function render(element: Parameters<typeof renderToStaticMarkup>[0], letters: DeadLetterView[] = []): string {
  const store = createAppStore({ deadLetters: async () => letters } as unknown as SiteApi);
  store.setState({ deadLetters: letters, lang: 'en', user: { name: 'Lena', roles: ['shift_lead'] } });
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, element));
}

/** The text of the payload cell of letter `id`, as the page shows it (entities undone). */
const payloadCell = (html: string, id: string): string | undefined => {
  const row = new RegExp(`<tr data-letter="${id}"[^>]*>.*?</tr>`, 's').exec(html)?.[0] ?? '';
  const m = /<td class="payload"><pre class="mono" tabindex="0">(.*?)<\/pre><\/td>/s.exec(row);
  return m?.[1]!.replace(/<[^>]+>/g, '').replace(/&quot;/g, '"').replace(/&#x27;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
};

describe('Dead letters: the payload', () => {
  it('indents a JSON payload, two spaces a level, and keeps every value as sent', () => {
    const sent = '{"v":1,"seq":12345678901234567890,"after":{"door":"D-07","state":"service","note":"a, b: {c}","esc":"\\u00e5\\"x\\""},"tags":[],"meta":{},"list":[1.50,true,null]}';
    expect(prettyPayload(sent)).toBe(
      [
        '{',
        '  "v": 1,',
        '  "seq": 12345678901234567890,',
        '  "after": {',
        '    "door": "D-07",',
        '    "state": "service",',
        '    "note": "a, b: {c}",',
        '    "esc": "\\u00e5\\"x\\""',
        '  },',
        '  "tags": [],',
        '  "meta": {},',
        '  "list": [',
        '    1.50,',
        '    true,',
        '    null',
        '  ]',
        '}',
      ].join('\n'),
    );
    // Whitespace between tokens is the indentation's; inside a string it stays.
    expect(prettyPayload(' { "a" : [ 1 , { } ] ,"b":"x  y" } ')).toBe('{\n  "a": [\n    1,\n    {}\n  ],\n  "b": "x  y"\n}');
    expect(prettyPayload('42')).toBe('42');
    expect(prettyPayload('"just text"')).toBe('"just text"');
  });

  it('shows a payload that is not JSON as it came', () => {
    for (const raw of ['{oops', 'robust test 1', '{"a":1,}', '', '\uFEFF{"a":1}', '{"a": "unterminated}']) expect(prettyPayload(raw)).toBe(raw);
  });

  it('puts the payload in a block of its own in the row, indented', () => {
    const html = render(createElement(DeadLetters), [letter('21', '{"after":{"door":"D-07","state":"service"}}'), letter('22', '{oops, <b>')]);
    expect(payloadCell(html, '21')).toBe('{\n  "after": {\n    "door": "D-07",\n    "state": "service"\n  }\n}');
    expect(payloadCell(html, '22')).toBe('{oops, <b>');
  });

  it('lets the topic beside it break after its slashes, not in a word, so the payload keeps its width at 1024 px', () => {
    const html = render(createElement(DeadLetters), [letter('21', '{}')]);
    expect(html).toContain('<td class="mono">tilstand/<wbr/>demo/<wbr/>events/<wbr/>yard/<wbr/>doors</td>');
  });
});

describe("Dead letters: a letter's row as a walk in chromium found it", () => {
  // The demo's yard letter as the module sends it: `"state": "service"`, what a shift lead needs, is its 11th line of 15.
  const yard = JSON.stringify({
    op: 'u',
    before: { door_id: 'D-03', state: 'occupied', trailer_id: 'TR-0134', since: '2026-12-06T08:53:15.500' },
    after: { door_id: 'D-03', state: 'service', trailer_id: 'TR-0134', since: '2026-12-06T08:53:38.120' },
  });
  const css = async () => {
    const { readFileSync } = (await import('node:fs' as string)) as { readFileSync(p: URL, e: 'utf8'): string };
    return readFileSync(new URL('../styles.css', import.meta.url), 'utf8');
  };
  const rule = (text: string, selector: string) => new RegExp(`^${selector.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\{([^}]*)\\}`, 'm').exec(text)?.[1];

  it("shows a yard letter's state within the block's lines", async () => {
    const lines = prettyPayload(yard).split('\n');
    const state = lines.findIndex((l) => l.includes('"state": "service"'));
    const block = /\.payload pre \{[^}]*max-height: calc\((\d+) \* 1\.25em\)/.exec(await css());
    expect(state).toBe(10);
    expect(Number(block?.[1])).toBeGreaterThan(lines.length);
    expect(Number(block?.[1])).toBeLessThanOrEqual(24);
  });

  it('keeps a time and a code in the payload whole, and the received time on one line', async () => {
    const html = render(createElement(DeadLetters), [letter('21', yard)]);
    expect(payloadCell(html, '21')).toBe(prettyPayload(yard));
    const pre = /<td class="payload"><pre class="mono" tabindex="0">(.*?)<\/pre>/s.exec(html)![1]!;
    // "2026-12-/06T08:44:59.719" broke at its hyphen: each code or date in a span that does not break.
    expect(pre).toContain('&quot;since&quot;: &quot;<span class="code">2026-12-06T08</span>:53:15.500&quot;');
    expect(pre).toContain('<span class="code">TR-0134</span>');
    expect(rule(await css(), 'td.code, span.code')).toMatch(/white-space: nowrap/);
    expect(html).toMatch(/<tr data-letter="21" class="attention"><td class="word received">[^<]+<\/td>/);
    expect(rule(await css(), 'td.word, span.when, span.point')).toMatch(/white-space: nowrap/);
  });

  it("puts a letter's buttons one under the other, apart, and Replay all apart from the line under it", async () => {
    const html = render(createElement(DeadLetters), [letter('21', '{}')]);
    expect(html).toMatch(/<td><div class="letter-actions"><button class="dismiss">Dismiss<\/button><button class="replay-alike" [^>]*>Replay this and every open one like it<\/button><\/div><\/td>/);
    const text = await css();
    expect(rule(text, '.letter-actions')).toMatch(/display: flex; flex-direction: column;[^}]*gap: 8px;/);
    expect(rule(text, 'section.dead-letters > button.primary')).toMatch(/margin-bottom: 12px;/);
    // A closed letter has no buttons, and no empty box for them.
    const closed = render(createElement(DeadLetters), [{ ...letter('22', '{}'), status: 'replayed' }]);
    expect(closed).not.toContain('letter-actions');
  });
});

describe('Dead letters: the dismissal', () => {
  const row = (o: { offerAlike?: boolean } = {}) =>
    render(
      createElement(
        'table',
        null,
        createElement(
          'tbody',
          null,
          createElement(DismissRow, { id: '21', note: 'door was in service', setNote: () => {}, alikeListed: 2, offerAlike: o.offerAlike ?? true, alike: false, setAlike: () => {}, busy: false, onSubmit: () => {}, onCancel: () => {} }),
        ),
      ),
    );

  it('is a row of its own across every column of the letters, its note field growing to the row', () => {
    const html = row();
    expect(html).toMatch(/<tr class="dismiss-row" data-dismissing="21"><td colSpan="5"><form class="dismiss">/);
    expect(html).toContain('<label class="note">Why (kept with your name)<input autofocus="" maxLength="500" name="dismissNote" value="door was in service"/></label>');
    expect(html).toContain('Also every other open letter from this topic with this reason (2 listed here)');
    expect(html).toMatch(/<button class="primary" type="submit">Dismiss<\/button><button type="button">Cancel<\/button>/);
    expect(row({ offerAlike: false })).not.toContain('dismissAlike');
  });

  it('is not there until Dismiss is pressed: the letter keeps its Dismiss in its row', () => {
    // The screen opens it on Dismiss (state); unopened, no row of it.
    const html = render(createElement(DeadLetters), [letter('21', '{}')]);
    expect(html).not.toContain('dismiss-row');
    expect(html).toMatch(/<tr data-letter="21" class="attention">.*<button class="dismiss">Dismiss<\/button>/s);
  });

  it('gives the note the width of a sentence in the stylesheet (it grows from 24em to the row, within it), and the payload its block', async () => {
    // The renderer's type check knows no node modules; the test runs in node.
    const { readFileSync } = (await import('node:fs' as string)) as { readFileSync(p: URL, e: 'utf8'): string };
    const css = readFileSync(new URL('../styles.css', import.meta.url), 'utf8');
    expect(css).toMatch(/form\.dismiss label\.note \{ flex: 1 1 24em; min-width: 0; \}/);
    expect(css).toMatch(/form\.dismiss label\.note input \{ width: 100%; box-sizing: border-box; \}/);
    expect(css).toMatch(/form\.dismiss label\.filter \{ flex-basis: 100%; \}/);
    // The payload block: wide enough for its indentation, a bounded height of 20 lines, scrolling, the indentation kept.
    expect(css).toMatch(/\.payload pre \{[^}]*min-width: 28ch;[^}]*line-height: 1\.25;[^}]*max-height: calc\(20 \* 1\.25em\);[^}]*overflow: auto;[^}]*white-space: pre-wrap;/);
  });
});
