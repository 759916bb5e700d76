// The one "has the focus dropped?" test (`focusDropped`) behind the three helpers that put the focus
// back only then: `focusIfDropped` (Users' Add: the form emptied disables Add), `errorLineFocus`'s
// `closed` (ErrorLineFocus.test.ts) and `focusFirstOf`'s `ifDropped` (a dead letter's replay,
// screens/DeadLettersReplayFocus.test.ts). A focus the person put elsewhere stays.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { focusDropped, focusIfDropped } from './common.tsx';

interface FakeEl { name: string; isConnected?: boolean; matches(s: string): boolean; focus(): void }

afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

function page() {
  const doc = { activeElement: null as FakeEl | null, body: null as FakeEl | null, els: new Map<string, FakeEl>(), querySelector: (s: string) => doc.els.get(s) ?? null };
  const el = (name: string, connected?: boolean): FakeEl => {
    const e: FakeEl = { name, ...(connected === undefined ? {} : { isConnected: connected }), matches: (s) => s === name, focus: () => void (doc.activeElement = e) };
    doc.els.set(name, e);
    return e;
  };
  doc.body = el('body');
  doc.activeElement = doc.body;
  return { doc, el };
}

describe('focusDropped', () => {
  it('is on the page, nowhere, on a gone element or on `from`; not on an element elsewhere', () => {
    const { doc, el } = page();
    const body = doc.body as unknown as Element;
    const as = (e: FakeEl | null | undefined) => e as unknown as Element | null | undefined;
    expect(focusDropped(as(doc.body), body)).toBe(true);
    expect(focusDropped(null, body)).toBe(true);
    expect(focusDropped(undefined, body)).toBe(true);
    expect(focusDropped(as(el('✖', false)), body)).toBe(true);
    expect(focusDropped(as(el('field', true)), body)).toBe(false);
    expect(focusDropped(as(el('field')), body)).toBe(false);
    expect(focusDropped(as(el('add')), body, 'add')).toBe(true);
    expect(focusDropped(as(el('add')), body, 'other')).toBe(false);
  });
});

describe('focusIfDropped (Users: a user added empties the form, which disables Add)', () => {
  const NAME = 'form.add-user input[name="name"]';
  const ADD = 'form.add-user button[type="submit"]';
  it('moves the focus from the disabled Add, or from the page, to the name field', () => {
    vi.useFakeTimers();
    for (const start of [ADD, 'body']) {
      const { doc, el } = page();
      el(NAME);
      (doc.els.get(start) ?? el(start)).focus();
      vi.stubGlobal('document', doc);
      focusIfDropped(NAME, ADD);
      vi.runAllTimers();
      expect(doc.activeElement?.name).toBe(NAME);
    }
  });
  it('leaves a focus put elsewhere meanwhile', () => {
    vi.useFakeTimers();
    const { doc, el } = page();
    el(NAME);
    el('select.lang').focus();
    vi.stubGlobal('document', doc);
    focusIfDropped(NAME, ADD);
    vi.runAllTimers();
    expect(doc.activeElement?.name).toBe('select.lang');
  });
});
