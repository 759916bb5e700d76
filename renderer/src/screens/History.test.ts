// The History screen's account of what it shows, rendered from the store's state (server-side
// markup, no browser): which snapshot and when it was committed, whether the rows were cut at the
// screen's limit, an empty table, and a comparison's two ends — "no changes" said in words rather
// than an empty table — in each language.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { inTimeZone } from '../testing/time-zone.ts';
import type { DiffResult, HistoryResult, SiteApi } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { createAppStore, type AppState } from '../store/store.ts';
import { History, readPoint } from './History.tsx';

type Lang = 'en' | 'nb' | 'de';
const T1 = Date.UTC(2026, 11, 3, 6, 0, 5);
const T2 = Date.UTC(2026, 11, 3, 7, 30, 0);

function render(state: Partial<AppState>, lang: Lang = 'en'): string {
  const store = createAppStore({} as SiteApi);
  store.setState({ tables: [], tags: [], lang, history: null, diff: null, ...state });
  store.getInitialState = store.getState; // what server-side rendering reads
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(History)));
}

const history = (o: Partial<HistoryResult>): HistoryResult => ({
  table: 'stock', snapshotId: 41, snapshotMs: T1, columns: ['item', 'on_hand'], types: ['STRING NOT NULL', 'INT'], rows: [['ITEM-001', 4], ['ITEM-002', 9]], more: false, ...o,
});
const diff = (o: Partial<DiffResult>): DiffResult => ({
  table: 'stock', from: { snapshotId: 41, snapshotMs: T1 }, to: { snapshotId: 57, snapshotMs: T2 }, columns: ['item', 'on_hand'], types: ['STRING NOT NULL', 'INT'],
  changes: [{ kind: '-U', row: ['ITEM-001', 4] }, { kind: '+U', row: ['ITEM-001', 7] }], more: false, ...o,
});

describe('History screen', () => {
  inTimeZone('Europe/Oslo'); // UTC+1 in December: the times below are local

  it('names the snapshot read and its commit time, in each language', () => {
    expect(render({ history: history({}) })).toContain('stock at snapshot #41, committed 03/12/2026, 07:00:05. Rows: 2');
    expect(render({ history: history({}) }, 'nb')).toContain('stock ved øyeblikksbilde #41, lagret 03.12.2026, 07:00:05. Rader: 2');
    expect(render({ history: history({}) }, 'de')).toContain('stock bei Snapshot #41, geschrieben 03.12.2026, 07:00:05. Zeilen: 2');
    expect(render({ history: history({}) })).not.toContain('There are more');
  });

  it('says when the rows were cut, and how to narrow them', () => {
    const html = render({ history: history({ more: true }) });
    expect(html).toContain('Rows: the first 2. There are more: narrow them with “Rows containing”.');
    expect(html).toContain('name="contains"');
    expect(render({ history: history({ more: true }) }, 'nb')).toContain('Det finnes flere: avgrens med «Rader som inneholder».');
  });

  it('says a table has no snapshot yet instead of showing an empty table', () => {
    const html = render({ history: history({ snapshotId: null, snapshotMs: null, rows: [] }) });
    expect(html).toContain('stock has no snapshot yet');
    expect(html).not.toContain('<table');
  });

  it("names a comparison's two ends, and says so in words when nothing changed", () => {
    const html = render({ diff: diff({}) });
    expect(html).toContain('stock from snapshot #41 (03/12/2026, 07:00:05) to the latest, #57 (03/12/2026, 08:30:00). Changes: 2');
    expect(html).toContain('<td class="change-kind" data-kind="+U" title="+U">after</td>');
    const none = render({ diff: diff({ changes: [], from: { snapshotId: 57, snapshotMs: T2 } }) });
    expect(none).toContain('stock: no changes from snapshot #57 (03/12/2026, 08:30:00) to the latest, #57 (03/12/2026, 08:30:00)');
    expect(none).not.toContain('<table');
    expect(render({ diff: diff({ more: true }) }, 'de')).toContain('stock von Snapshot #41 (03.12.2026, 07:00:05) bis zum aktuellen, #57 (03.12.2026, 08:30:00). Änderungen: die ersten 2. Es gibt weitere');
  });

  it("says each change of a comparison in words, in each language, Paimon's mark on hover", () => {
    const changes: DiffResult['changes'] = [
      { kind: '-D', row: ['ITEM-001', 4] },
      { kind: '-U', row: ['ITEM-002', 9] },
      { kind: '+U', row: ['ITEM-002', 7] },
      { kind: '+I', row: ['ITEM-003', 1] },
    ];
    const kinds = (html: string) => [...html.matchAll(/<td class="change-kind" data-kind="([^"]+)" title="([^"]+)">([^<]*)<\/td>/g)].map((m) => `${m[1]} ${m[2]} ${m[3]}`);
    expect(kinds(render({ diff: diff({ changes }) }))).toEqual(['-D -D removed', '-U -U before', '+U +U after', '+I +I added']);
    expect(kinds(render({ diff: diff({ changes }) }, 'nb'))).toEqual(['-D -D fjernet', '-U -U før', '+U +U etter', '+I +I lagt til']);
    expect(kinds(render({ diff: diff({ changes }) }, 'de'))).toEqual(['-D -D entfernt', '-U -U vorher', '+U +U nachher', '+I +I hinzugefügt']);
    // The column has a heading; a mark of a newer site as it came.
    expect(render({ diff: diff({ changes }) }, 'de')).toContain('<th scope="col">Änderung</th>');
    expect(kinds(render({ diff: diff({ changes: [{ kind: '+X' as '+I', row: ['ITEM-001', 4] }] }) }))).toEqual(['+X +X +X']);
  });

  it('keeps item and job codes whole in its cells, in a sentence too ("ITEM-/001" broke at its hyphen)', () => {
    const rows = [['ITEM-001', 'material short: ITEM-003'], ['J-0010', 'plain text']];
    const html = render({ history: history({ columns: ['item', 'blocked_reason'], types: ['STRING', 'STRING'], rows }) });
    expect(html).toContain('<td><span class="code">ITEM-001</span></td>');
    expect(html).toContain('<td>material short: <span class="code">ITEM-003</span></td>');
    expect(html).toContain('<td>plain text</td>');
    const compared = render({ diff: diff({ columns: ['item', 'blocked_reason'], types: ['STRING', 'STRING'], changes: [{ kind: '+I', row: rows[0]! }] }) });
    expect(compared).toContain('<td><span class="code">ITEM-001</span></td><td>material short: <span class="code">ITEM-003</span></td>');
  });

  it('reads a point from the field of its own kind, and none while that field is empty or not a point', () => {
    // A tag picked, then "time" chosen: the tag's name is not read as a time (it was: NaN, refused).
    const picked = { tag: 'agent-1', snapshot: '', time: '' };
    expect(readPoint('tag', picked)).toEqual({ tag: 'agent-1' });
    expect(readPoint('time', picked)).toBeNull();
    expect(readPoint('snapshot', picked)).toBeNull();
    expect(readPoint('latest', picked)).toEqual({ latest: true });
    expect(readPoint('time', { ...picked, time: '2026-12-03T08:30' })).toEqual({ timestampMs: T2 }); // this PC's (Oslo) wall clock
    expect(readPoint('snapshot', { ...picked, snapshot: '41' })).toEqual({ snapshotId: 41 });
    expect(readPoint('snapshot', { ...picked, snapshot: '4l' })).toBeNull();
    expect(readPoint('tag', { ...picked, tag: '' })).toBeNull();
  });
});

