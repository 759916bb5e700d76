// Times as the floor sees them (server-side markup, no browser), in this PC's time zone:
// - a site table's cell (History rows and diffs, a proposal's evidence): a TIMESTAMP column's
//   value — the UTC wall clock as stored — with the stored text on hover; nested values as JSON;
//   anything else as it came;
// - an agent's explanation and a trail entry: each UTC instant in the text (`…Z`).
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { inTimeZone } from '../testing/time-zone.ts';
import type { HistoryResult, ProposalDetail, SiteApi } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { formatCell, formatWhen, localizeInstants } from '../i18n/messages.ts';
import { createAppStore } from '../store/store.ts';
import { History } from './History.tsx';
import { Inbox } from './Inbox.tsx';

describe('table cells', () => {
  inTimeZone('Europe/Oslo'); // UTC+1 in December

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
    const history: HistoryResult = { table: 'work_queue', snapshotId: 3, snapshotMs: Date.UTC(2026, 11, 2, 9, 36, 14), more: false, columns: ['job_id', 'due_at'], types: ['STRING NOT NULL', 'TIMESTAMP(3)'], rows: [['J-7', '2026-12-02T09:36:13.017']] };
    const store = createAppStore({} as SiteApi);
    store.setState({ lang: 'en', history, tables: [] });
    store.getInitialState = store.getState; // what server-side rendering reads
    const html = renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(History)));
    expect(html).toContain('<td><span class="code">J-7</span></td>'); // a code kept whole
    expect(html).toContain('<td title="2026-12-02T09:36:13.017">02/12/2026, 10:36:13</td>');
  });

  it("shows the UTC instants in an explanation and a trail entry in local time, in the work queue's short form; the stored text on the heading's hover", () => {
    const now = Date.UTC(2026, 11, 2, 6, 0);
    // As the work queue shows a due time (formatWhen): "06/12/2026, 05:52:37" in the proposal beside "Sun 6 Dec, 05:52" on the job's row read as two things.
    expect(localizeInstants('en', 'due 2026-12-01T23:40:36.012Z. Started now', now)).toBe('due Wed 2 Dec, 00:40. Started now');
    expect(localizeInstants('en', 'due 2026-12-01T23:40:36.012Z. Started now', now)).toBe(`due ${formatWhen('en', Date.UTC(2026, 11, 1, 23, 40, 36), now)}. Started now`);
    expect(localizeInstants('nb', 'due 2026-12-01T23:40:36.012Z', now)).toBe('due ons. 2. des., 00:40');
    expect(localizeInstants('de', 'due 2026-12-01T23:40:36.012Z', now)).toBe('due Mi., 2. Dez., 00:40');
    expect(localizeInstants('en', 'from 2026-12-01T08:00Z to 2026-12-01T09:00:00Z', now)).toBe('from Tue 1 Dec, 09:00 to Tue 1 Dec, 10:00');
    // Another year than the site's clock's: with the year, as on the work queue.
    expect(localizeInstants('en', 'due 2026-12-01T23:40:36.012Z', Date.UTC(2027, 5, 1))).toBe('due Wed, 2 Dec 2026, 00:40');
    expect(localizeInstants('en', 'no zone 2026-12-01T23:40:36 and not a time 2026-13-99T99:99:99Z', now)).toBe('no zone 2026-12-01T23:40:36 and not a time 2026-13-99T99:99:99Z');
    const explanation = 'Job J-0013 is blocked and due 2026-12-01T23:40:36.012Z. Raise its priority from 2.';
    const p: ProposalDetail = {
      id: 'P-1',
      status: 'open',
      action: 'raise_priority',
      module: 'operations',
      params: {},
      ruleId: 'escalate-late-job',
      ruleVersion: '2',
      risk: 'low',
      riskReason: 'reversible',
      explanation,
      createdMs: Date.UTC(2026, 11, 1, 23, 0),
      evidence: [{ table: 'work_queue', snapshotId: 4, tag: 'agent-r1', rows: [{ job_id: 'J-0013', due_at: '2026-12-01T23:40:36.012' }], types: { job_id: 'STRING NOT NULL', due_at: 'TIMESTAMP(3)' } }],
      trail: [{ atMs: Date.UTC(2026, 11, 1, 23, 0), event: 'proposed', user: 'agent-r1', detail: 'due 2026-12-01T23:40:36.012Z' }],
      failedBefore: [],
    };
    const store = createAppStore({} as SiteApi);
    store.setState({ lang: 'en', proposals: [p], selected: p, status: { nowMs: now } as never });
    store.getInitialState = store.getState;
    const html = renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(Inbox)));
    expect(html).toContain(`<h2 title="${explanation}">`);
    expect(html.replace(/ title="[^"]*"/g, '')).not.toContain('2026-12-01T23:40:36.012Z'); // shown nowhere else
    expect(html.split('due Wed 2 Dec, 00:40').length - 1).toBe(4); // list, panel's name, heading, trail
    expect(html).toContain('<td title="2026-12-01T23:40:36.012">02/12/2026, 00:40:36</td>'); // the evidence row
  });
});

describe('a point in time for the floor (formatWhen)', () => {
  inTimeZone('Europe/Oslo'); // UTC+1 in winter

  it("shows the year when it is not this year's, in local time; this year's short", () => {
    const now = Date.UTC(2027, 0, 1, 9, 0); // 1 January 2027, 10:00 in Oslo
    // 23:30 UTC on New Year's Eve is already 2027 in Oslo: this year, no year shown.
    expect(formatWhen('en', Date.UTC(2026, 11, 31, 23, 30), now)).toBe('Fri 1 Jan, 00:30');
    // An hour earlier is still 2026 in Oslo: read without its year it was this December's.
    expect(formatWhen('en', Date.UTC(2026, 11, 31, 22, 30), now)).toBe('Thu, 31 Dec 2026, 23:30');
    expect(formatWhen('nb', Date.UTC(2026, 11, 31, 22, 30), now)).toBe('tor. 31. des. 2026, 23:30');
    expect(formatWhen('de', Date.UTC(2026, 11, 31, 22, 30), now)).toBe('Do., 31. Dez. 2026, 23:30');
    expect(formatWhen('en', Date.UTC(2028, 5, 1, 8, 0), now)).toContain('2028'); // a later year too
    expect(formatWhen('en', null, now)).toBe('–');
  });
});
