// Numbers in History's and the evidence's cells in the chosen language's number format, as Stock
// and Tables write theirs: they were shown as stored ("12345.5" in German, beside "12.345" on the
// Stock screen), the stored text now on hover. Every digit kept (a DOUBLE's value is not rounded
// to three decimals), a DECIMAL's scale kept, and a number no format writes exactly shown as
// stored. Server-side markup, no browser.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { HistoryResult, SiteApi } from '../../../core/site/api.ts';
import { ValueCell } from '../components/common.tsx';
import { StoreContext } from '../context.tsx';
import { formatCell, type Lang } from '../i18n/messages.ts';
import { createAppStore } from '../store/store.ts';
import { History } from './History.tsx';

const NBSP = '\u00a0';

describe('a number in a cell', () => {
  it.each([
    ['en', '12,345.5'],
    ['nb', `12${NBSP}345,5`],
    ['de', '12.345,5'],
  ] as Array<[Lang, string]>)('is written as %s writes numbers, the stored text on hover', (lang, text) => {
    expect(formatCell(lang, 'DOUBLE', 12345.5)).toEqual({ text, raw: '12345.5' });
  });

  it('keeps every digit, and a DECIMAL its scale, a BIGINT past 2^53 all of it', () => {
    expect(formatCell('en', 'DOUBLE', 1234.56789).text).toBe('1,234.56789');
    expect(formatCell('en', 'DOUBLE', 0.30000000000000004).text).toBe('0.30000000000000004');
    expect(formatCell('de', 'DECIMAL(10, 2)', '12345.50')).toEqual({ text: '12.345,50', raw: '12345.50' });
    expect(formatCell('en', 'BIGINT', '9007199254740993')).toEqual({ text: '9,007,199,254,740,993', raw: '9007199254740993' });
    // Written the same: no hover.
    expect(formatCell('de', 'INT', -42)).toEqual({ text: '-42' });
  });

  it('shows as stored what no format writes exactly, and text that only looks like a number', () => {
    expect(formatCell('en', 'DOUBLE', 1e21)).toEqual({ text: '1e+21' });
    expect(formatCell('en', 'DOUBLE', 'NaN')).toEqual({ text: 'NaN' });
    expect(formatCell('en', 'DOUBLE', 0.0000012345678901234567)).toEqual({ text: '0.0000012345678901234567' });
    // An id or a code in a STRING column is no number.
    expect(formatCell('en', 'STRING', '12345')).toEqual({ text: '12345' });
  });

  it('is written so in History and in the evidence (ValueCell)', () => {
    const history: HistoryResult = {
      table: 'stock', snapshotId: 7, snapshotMs: 0, more: false, columns: ['item', 'on_hand'], types: ['STRING', 'DOUBLE'], rows: [['ITEM-001', 12345.5]],
    };
    const store = createAppStore({} as SiteApi);
    store.setState({ tables: [], tags: [], lang: 'de', history, diff: null });
    store.getInitialState = store.getState; // what server-side rendering reads
    expect(renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(History)))).toContain('<td title="12345.5">12.345,5</td>');
    const cell = renderToStaticMarkup(createElement('table', null, createElement('tbody', null, createElement('tr', null, createElement(ValueCell, { lang: 'nb', type: 'INT', value: 2500, codes: true })))));
    expect(cell).toContain(`<td title="2500">2${NBSP}500</td>`);
  });
});
