// The UI server's refusals of a request as a whole (core/site/api.ts RefusalCode `request.*`,
// ui-server.ts) in the reader's language: a request over the server's size limit (a long pasted
// comment or search) says so with the limit and what to do, in en, nb and de, not the server's
// "request body over 65536 bytes"; the others (no JSON, not POST, a header missing: only a
// hand-made request) say the site refused the request. Through the real client, store and screens
// (server-side markup), the body as ui-server.ts sends it.
import { describe, expect, it } from 'vitest';
import type { ApiErrorBody } from '../../../core/site/api.ts';
import { App } from '../App.tsx';
import { formatBytes, refusalText } from './messages.ts';
import { errorLine, storeRefusing } from './refusal-testing.ts';

const TOO_LARGE: ApiErrorBody = { kind: 'invalid', message: 'request body over 65536 bytes', code: 'request.tooLarge', params: { max: 65_536 } };

describe('a request over the UI server’s size limit (request.tooLarge)', () => {
  it('says the limit and what to do in en, nb and de, never the server’s message', async () => {
    const store = storeRefusing('stock', TOO_LARGE, 'shift_lead');
    store.setState({ screen: 'stock' });
    await store.getState().loadStock('x'.repeat(70_000));
    expect(errorLine(store, 'en', App)).toBe(`The site refused this: a request may be at most ${formatBytes('en', 65_536)}; shorten what you typed (a comment, say) and send it again`);
    expect(errorLine(store, 'nb', App)).toBe(`Stedet avviste dette: en forespørsel kan være på høyst ${formatBytes('nb', 65_536)}; gjør det du skrev kortere (for eksempel en kommentar) og send igjen`);
    expect(errorLine(store, 'de', App)).toBe(`Der Standort hat das abgelehnt: eine Anfrage darf höchstens ${formatBytes('de', 65_536)} groß sein; das Eingegebene (etwa einen Kommentar) kürzen und erneut senden`);
    for (const lang of ['en', 'nb', 'de'] as const) expect(errorLine(store, lang, App)).not.toContain('65536');
  });

  it('falls back to the server’s message without the limit', () => {
    expect(refusalText('en', { message: 'request body over 65536 bytes', code: 'request.tooLarge' })).toBe('request body over 65536 bytes');
    expect(refusalText('nb', { message: 'request body over 65536 bytes', code: 'request.tooLarge', params: { max: 'lots' } })).toBe('request body over 65536 bytes');
  });
});

describe('any other refusal of the request as a whole (request.refused)', () => {
  it('says the site refused the request, as input.refused says it of the request itself', () => {
    for (const message of ['POST only', 'cross-site request refused', 'Unexpected end of JSON input']) {
      const r = { message, code: 'request.refused' };
      expect(refusalText('en', r)).toBe('The site refused the request: reload the page; if it happens again, tell IT');
      expect(refusalText('nb', r)).toBe(refusalText('nb', { message, code: 'input.refused', params: { field: '' } }));
      expect(refusalText('de', r)).toBe(refusalText('de', { message, code: 'input.refused', params: { field: '' } }));
    }
  });
});
