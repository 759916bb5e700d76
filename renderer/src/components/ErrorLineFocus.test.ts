// Where the keyboard focus goes when the error line is closed (`errorLineFocus`, App.tsx), on a
// fake page: its ✖ button goes with the line, and chromium drops the focus to the page — a
// keyboard or scanner user lost their place. The focus goes back to the last element focused
// outside the line (the button or field of what failed), else to the navigation's current screen;
// a focus put elsewhere meanwhile stays. (In chromium: test/e2e/floor-ui-error-close.e2e.test.ts.)
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { errorLineFocus, type FocusDocument } from './common.tsx';

interface FakeEl { name: string; isConnected: boolean; inErrorLine: boolean; closest(s: string): FakeEl | null; focus(): void }

function page() {
  const listeners = new Set<(e: { target: EventTarget | null }) => void>();
  const doc = {
    activeElement: null as FakeEl | null,
    body: null as FakeEl | null,
    querySelector: (s: string) => (s === 'nav [aria-current="page"]' ? nav : null),
    addEventListener: (_: 'focusin', l: (e: { target: EventTarget | null }) => void) => void listeners.add(l),
    removeEventListener: (_: 'focusin', l: (e: { target: EventTarget | null }) => void) => void listeners.delete(l),
  };
  const el = (name: string, inErrorLine = false): FakeEl => {
    const e: FakeEl = {
      name, isConnected: true, inErrorLine,
      closest: (s: string) => (s === 'p.error' && e.inErrorLine ? e : null),
      focus: () => {
        doc.activeElement = e;
        for (const l of listeners) l({ target: e as unknown as EventTarget });
      },
    };
    return e;
  };
  const body = el('body');
  doc.body = body;
  doc.activeElement = body;
  const nav = el('nav current');
  /** The line's button gone, as chromium has it: the focus on the page. */
  const lineGone = (close: FakeEl) => {
    close.isConnected = false;
    if (doc.activeElement === close) doc.activeElement = body;
  };
  return { doc: doc as unknown as FocusDocument, el, lineGone, at: () => doc.activeElement?.name, listeners };
}

describe('closing the error line', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('gives the focus back to the button that failed, not the page', () => {
    const p = page();
    const f = errorLineFocus(p.doc);
    const stop = f.watch();
    const add = p.el('Add user');
    add.focus();
    // The refusal shows the line; the person goes to its ✖ and presses Enter.
    const close = p.el('✖', true);
    close.focus();
    p.lineGone(close);
    f.closed();
    expect(p.at()).toBe('body');
    vi.runAllTimers();
    expect(p.at()).toBe('Add user');
    stop();
    expect(p.listeners.size).toBe(0);
  });

  it('to the navigation\'s current screen when that element is gone too', () => {
    const p = page();
    const f = errorLineFocus(p.doc);
    f.watch();
    const row = p.el('Dismiss');
    row.focus();
    const close = p.el('✖', true);
    close.focus();
    row.isConnected = false;
    p.lineGone(close);
    f.closed();
    vi.runAllTimers();
    expect(p.at()).toBe('nav current');
  });

  it('leaves a focus the person put elsewhere', () => {
    const p = page();
    const f = errorLineFocus(p.doc);
    f.watch();
    p.el('Add user').focus();
    f.closed(); // a click on the line's text, the focus then moved on by the person
    p.el('search').focus();
    vi.runAllTimers();
    expect(p.at()).toBe('search');
  });

  it('does nothing without a page (server-side markup)', () => {
    const f = errorLineFocus(undefined);
    expect(() => f.watch()()).not.toThrow();
    expect(() => f.closed()).not.toThrow();
  });
});
