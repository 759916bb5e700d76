// What the floor UI sends the site of its own failures (report-error.ts): once per distinct error,
// bounded in size and count, the site's id back, null when the site does not take it (Electron's
// bridge has no such method yet), and the page's uncaught errors and rejections too.

import { describe, expect, it } from 'vitest';
import type { ClientErrorReport } from '../../core/site/api.ts';
import { CLIENT_ERROR_MESSAGE_MAX, CLIENT_ERROR_STACK_MAX } from '../../core/site/api.ts';
import { createReporter, REPORT_MESSAGE_MAX, REPORT_STACK_MAX, reportUncaught, shownScreen } from './report-error.ts';

function sink(answer: (r: ClientErrorReport) => Promise<{ id: string | null }> = async () => ({ id: 'abcd0123' })) {
  const sent: ClientErrorReport[] = [];
  return { sent, send: (r: ClientErrorReport) => (sent.push(r), answer(r)) };
}

describe('createReporter', () => {
  it('sends the error with its screen, language and version, trimmed to what the site takes, and answers its id', async () => {
    expect(REPORT_MESSAGE_MAX).toBe(CLIENT_ERROR_MESSAGE_MAX);
    expect(REPORT_STACK_MAX).toBe(CLIENT_ERROR_STACK_MAX);
    const s = sink();
    const r = createReporter(s.send, '0.1.0');
    const e = new TypeError('x'.repeat(2000));
    e.stack = 'y'.repeat(10_000);
    expect(await r.report('render', e, { screen: 'stock', lang: 'nb' })).toBe('abcd0123');
    expect(s.sent).toHaveLength(1);
    expect(s.sent[0]).toMatchObject({ kind: 'render', screen: 'stock', lang: 'nb', version: '0.1.0' });
    expect(s.sent[0]!.message).toBe(`TypeError: ${'x'.repeat(REPORT_MESSAGE_MAX - 'TypeError: '.length)}`);
    expect(s.sent[0]!.stack).toHaveLength(REPORT_STACK_MAX);
  });

  it('sends the same error once (a render loop, a boundary tried again) and gives it the same id', async () => {
    const s = sink();
    const r = createReporter(s.send);
    const ids = await Promise.all(Array.from({ length: 30 }, () => r.report('render', new Error('boom'), { screen: 'inbox' })));
    expect(new Set(ids)).toEqual(new Set(['abcd0123']));
    expect(s.sent).toHaveLength(1);
    await r.report('render', new Error('boom'), { screen: 'stock' });
    expect(s.sent).toHaveLength(2);
  });

  it('sends at most 20 distinct errors a page', async () => {
    const s = sink();
    const r = createReporter(s.send);
    for (let i = 0; i < 50; i++) await r.report('error', new Error(`e${i}`), {});
    expect(s.sent).toHaveLength(20);
  });

  it('answers null when the site refuses or does not answer, and null when over its rate', async () => {
    const refused = createReporter(async () => Promise.reject(new Error('unknown method "reportClientError"')));
    expect(await refused.report('render', new Error('x'), {})).toBeNull();
    const dropped = createReporter(async () => ({ id: null }));
    expect(await dropped.report('render', new Error('x'), {})).toBeNull();
    // A thrown non-Error says what it was.
    const s = sink();
    await createReporter(s.send).report('rejection', null, {});
    expect(s.sent[0]!.message).toBe('null');
  });
});

describe('reportUncaught', () => {
  it("reports window 'error' and 'unhandledrejection' with the screen shown, and stops when asked", async () => {
    const s = sink();
    const r = createReporter(s.send);
    const target = new EventTarget();
    const stop = reportUncaught(target as unknown as Window, r, () => ({ screen: 'signIn', lang: 'de' }));
    target.dispatchEvent(Object.assign(new Event('error'), { error: new RangeError('bad'), message: 'Uncaught RangeError: bad' }));
    target.dispatchEvent(Object.assign(new Event('unhandledrejection'), { reason: 'lost' }));
    await Promise.resolve();
    expect(s.sent.map((x) => [x.kind, x.message, x.screen, x.lang])).toEqual([
      ['error', 'RangeError: bad', 'signIn', 'de'],
      ['rejection', 'lost', 'signIn', 'de'],
    ]);
    stop();
    target.dispatchEvent(Object.assign(new Event('error'), { error: new Error('after') }));
    expect(s.sent).toHaveLength(2);
  });

  it('names the first-run and sign-in screens before the store has one', () => {
    expect(shownScreen({ firstRun: { initialized: false }, user: null, screen: 'inbox' })).toBe('firstRun');
    expect(shownScreen({ firstRun: { initialized: true }, user: null, screen: 'inbox' })).toBe('signIn');
    expect(shownScreen({ firstRun: null, user: { name: 'kari' }, screen: 'stock' })).toBe('stock');
  });
});
