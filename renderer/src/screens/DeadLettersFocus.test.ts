// After a dead letter is dismissed its form and its Dismiss button are gone, and the keyboard focus
// fell to the page (Tab began again at the top): it goes to the next open letter's Dismiss as
// listed (wrapping round, past those the same dismissal closed), else to the list. No DOM here:
// which places, in which order, and that the first one on the page is focused (a fake page);
// test/e2e/floor-ui-robust.e2e.test.ts checks it in chromium.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { focusFirstOf } from '../components/common.tsx';
import { focusAfterDismissal } from './DeadLetters.tsx';

const letter = (id: string, status: 'open' | 'dismissed' | 'replayed', topic = 't/a', reason = 'bad_json') => ({ id, status, topic, reason });
const ROWS = [letter('a', 'open'), letter('b', 'open', 't/b'), letter('c', 'open', 't/a', 'no_binding'), letter('d', 'open'), letter('x', 'dismissed')];
const dismissOf = (id: string) => `tr[data-letter="${id}"] button.dismiss`;
const LIST = 'section.dead-letters .table-wrap';

describe('the focus after a dismissal', () => {
  afterEach(() => vi.useRealTimers());

  it('goes to the next open letter as listed, wrapping round, then to the list', () => {
    expect(focusAfterDismissal(ROWS, 'b', false)).toEqual([dismissOf('c'), dismissOf('d'), dismissOf('a'), LIST]);
    expect(focusAfterDismissal(ROWS, 'd', false)).toEqual([dismissOf('a'), dismissOf('b'), dismissOf('c'), LIST]);
    expect(focusAfterDismissal([letter('a', 'open'), letter('x', 'dismissed')], 'a', false)).toEqual([LIST]);
  });

  it('passes over the letters the same dismissal closed (its topic and reason, when ticked)', () => {
    expect(focusAfterDismissal(ROWS, 'a', true)).toEqual([dismissOf('b'), dismissOf('c'), LIST]);
    expect(focusAfterDismissal(ROWS, 'a', false)).toEqual([dismissOf('b'), dismissOf('c'), dismissOf('d'), LIST]);
  });

  it('quotes an id as a CSS attribute value', () => {
    expect(focusAfterDismissal([letter('a', 'open'), letter('q"\\1', 'open')], 'a', false)[0]).toBe('tr[data-letter="q\\"\\\\1"] button.dismiss');
  });

  it('focuses the first of them that is on the page once the dismissal has been rendered', () => {
    vi.useFakeTimers();
    const focused: string[] = [];
    const onPage = new Set([dismissOf('d'), LIST]);
    const doc = { querySelector: (s: string) => (onPage.has(s) ? { focus: () => void focused.push(s) } : null) } as unknown as Document;
    focusFirstOf(focusAfterDismissal(ROWS, 'b', false), doc);
    expect(focused).toEqual([]); // not before the page shows the reloaded list
    vi.advanceTimersByTime(1);
    expect(focused).toEqual([dismissOf('d')]);
  });
});
