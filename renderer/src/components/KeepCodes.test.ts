// KeepCodes keeps each code in a text on one line ("ITEM-003", "J-0010/2"). History shows up to
// 500 cells of a site's own table through it, whose strings may be long: a run of letters or
// digits without a hyphen must cost its length, not its length squared (the pattern tried every
// start inside such a run: 40,000 characters took about 1 s, 100,000 about 6 s, per cell).
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { KeepCodes } from './common.tsx';

const html = (text: string) => renderToStaticMarkup(createElement(KeepCodes, { text }));

describe('KeepCodes', () => {
  it('keeps codes whole and leaves the words around them free', () => {
    expect(html('material short: ITEM-003 at A-01/2')).toBe('material short: <span class="code">ITEM-003</span> at <span class="code">A-01/2</span>');
    expect(html('a-b--c-d x_Y-1 -Z- ab')).toBe('<span class="code">a-b</span>--<span class="code">c-d</span> x_<span class="code">Y-1</span> -Z- ab');
    expect(html('Auftrag J-0023 für Prüfstand-Ü3')).toBe('Auftrag <span class="code">J-0023</span> für <span class="code">Prüfstand-Ü3</span>');
  });

  // A bound on a call that takes milliseconds, not a speed measurement: without the fix this cell
  // alone ran about 25 s.
  it('goes through a 200,000-character run of letters and digits without a hyphen, as a cell of a site table may hold', { timeout: 5_000 }, () => {
    const blob = 'QUJD'.repeat(50_000);
    expect(html(`${blob} then ITEM-7`)).toBe(`${blob} then <span class="code">ITEM-7</span>`);
    expect(html(`ITEM-7 ${blob}-X`)).toBe(`<span class="code">ITEM-7</span> <span class="code">${blob}-X</span>`);
  });
});
