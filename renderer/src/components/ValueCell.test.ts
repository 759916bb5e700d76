// A site table's cell as the floor sees it (server-side markup, no browser): a TIMESTAMP column's
// value — the UTC wall clock as stored — in this PC's time zone, with the stored text on hover;
// nested values as JSON; anything else as it came. Used by History (rows and diffs) and the
// proposal detail's evidence.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { HistoryResult, SiteApi } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { formatCell } from '../i18n/messages.ts';
import { History } from '../screens/History.tsx';
import { createAppStore } from '../store/store.ts';

// The tests run in node; the renderer's own type check knows no node globals.
const env = (globalThis as unknown as { process: { env: Record<string, string | undefined> } }).process.env;

describe('table cells', () => {
  let tz: string | undefined;
  beforeAll(() => {
    tz = env.TZ;
    env.TZ = 'Europe/Oslo'; // UTC+1 in December
  });
  afterAll(() => {
    if (tz === undefined) delete env.TZ;
    else env.TZ = tz;
  });

  it('shows a TIMESTAMP in local time to the second and keeps the stored text', () => {
    expect(formatCell('en', 'TIMESTAMP(3)', '2026-12-02T09:36:13.017')).toEqual({ text: '02/12/2026, 10:36:13', raw: '2026-12-02T09:36:13.017' });
    expect(formatCell('nb', 'TIMESTAMP(3)', '2026-12-02T09:36:13.017').text).toBe('02.12.2026, 10:36:13');
    expect(formatCell('en', 'TIMESTAMP(6) WITH LOCAL TIME ZONE', '2026-12-02T09:36:13Z').text).toBe('02/12/2026, 10:36:13');
  });

  it('leaves other types, and a TIMESTAMP text it cannot read, as they came', () => {
    expect(formatCell('en', 'STRING', '2026-12-02T09:36:13.017')).toEqual({ text: '2026-12-02T09:36:13.017' });
    expect(formatCell('en', 'TIMESTAMP(3)', 'garbled')).toEqual({ text: 'garbled' });
    expect(formatCell('en', 'BIGINT', 42)).toEqual({ text: '42' });
    expect(formatCell('en', 'ROW<a INT>', { a: 1 })).toEqual({ text: '{"a":1}' });
    expect(formatCell('en', undefined, null)).toEqual({ text: '–' });
  });

  it('History shows a table read in local time, the stored text on hover', () => {
    const history: HistoryResult = { table: 'work_queue', snapshotId: 3, columns: ['job_id', 'due_at'], types: ['STRING NOT NULL', 'TIMESTAMP(3)'], rows: [['J-7', '2026-12-02T09:36:13.017']] };
    const store = createAppStore({} as SiteApi);
    store.setState({ lang: 'en', history, tables: [] });
    store.getInitialState = store.getState; // what server-side rendering reads
    const html = renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(History)));
    expect(html).toContain('<td>J-7</td>');
    expect(html).toContain('<td title="2026-12-02T09:36:13.017">02/12/2026, 10:36:13</td>');
  });
});
