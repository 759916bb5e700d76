// The Stock screen rendered from the store's state (server-side markup, no browser): each row
// shows the agent's reorder point for its item, a row under it is marked (in words, not only in
// colour) and says in its title what the agent would order up to; the filter to show only those
// rows is there, checked as the store says.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { ConfigChangeView, Role, SiteApi, StockView } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { createAppStore } from '../store/store.ts';
import { Stock } from './Stock.tsx';

const row = (over: Partial<StockView>): StockView => ({
  item: 'ITEM-001',
  location: 'A-01',
  on_hand: 30,
  reserved: 4,
  inbound: 0,
  available: 26,
  projected: 26,
  reorder_point: 5,
  order_up_to: 20,
  reorder_scope: 'default',
  reorder_set: null,
  item_policy: null,
  below_reorder_point: false,
  waiting: [],
  ...over,
});

function render(stock: StockView[], lang: 'en' | 'nb' | 'de' = 'en', stockBelow = false, role: Role = 'viewer', configChanges: ConfigChangeView[] | null = null, stockMore = false): string {
  const store = createAppStore({} as SiteApi);
  store.setState({ stock, lang, stockBelow, user: { name: 'Lena', roles: [role] }, configChanges, stockMore });
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(Stock)));
}

const rowOf = (html: string, item: string): string => {
  const at = html.indexOf(`<td class="code">${item}</td>`);
  expect(at, `${item} in the markup`).toBeGreaterThanOrEqual(0);
  const start = html.lastIndexOf('<tr', at);
  return html.slice(start, html.indexOf('</tr>', at));
};

describe('Stock screen', () => {
  const stock = [row({}), row({ item: 'ITEM-002', on_hand: 3, available: -1, projected: -1, reserved: 4, reorder_point: 10, order_up_to: 40, reorder_scope: 'location', below_reorder_point: true })];

  it("shows each row's reorder point and marks a row under it in words", () => {
    const html = render(stock);
    expect(html).toContain('<th scope="col">Reorder point</th>');
    const fine = rowOf(html, 'ITEM-001');
    expect(fine).not.toContain('attention');
    expect(fine).not.toContain('below-tag');
    expect(fine).toMatch(/data-scope="default" title="The agent proposes to order up to 20 \(the site default\)"><span class="point">5<\/span><\/td>/);
    const low = rowOf(html, 'ITEM-002');
    expect(low).toMatch(/^<tr class="attention"/);
    // The number stays with its "below" (span.point, no wrap); the scope may go under it at 1024 wide:
    // the space before it is outside its span, where the line may break.
    expect(low).toMatch(/class="num reorder" data-scope="location" title="The agent proposes to order up to 40 \(set for this location\)"><span class="point"><span class="chip-alert below-tag">below <\/span>10<\/span> <span class="scope-tag">· location<\/span><\/td>/);
    // Where the policy comes from, in words too (a touch screen shows no title); the default says nothing.
    expect(rowOf(render([row({ reorder_scope: 'item' })], 'de'), 'ITEM-001')).toContain('5</span> <span class="scope-tag">· Artikel</span></td>');
    expect(fine).not.toContain('scope-tag');
  });

  it('lists the changes people made to reorder points, newest first, in the chosen language', () => {
    const at = Date.UTC(2026, 11, 2, 8, 12);
    const changes: ConfigChangeView[] = [
      { id: 9, atMs: at, user: 'Per', key: 'agent.reorderByItem.ITEM-002', policyOf: { item: 'ITEM-002', location: null }, before: { reorderPoint: 15, orderUpTo: 60 }, after: null },
      { id: 7, atMs: at - 60_000, user: 'Lena', key: 'agent.reorderByItem.ITEM-002.locations.A-01', policyOf: { item: 'ITEM-002', location: 'A-01' }, before: null, after: { reorderPoint: 9, orderUpTo: 1200 } },
    ];
    const list = (html: string) => html.slice(html.indexOf('<details class="policy-changes">'), html.indexOf('</details>'));
    const en = list(render(stock, 'en', false, 'viewer', changes));
    expect(en).toContain('<summary>Changes to reorder points</summary>');
    expect(en.indexOf('Per: ITEM-002 (every location without its own): 15, up to 60 → not set')).toBeLessThan(en.indexOf('Lena: ITEM-002 at A-01: not set → 9, up to 1,200'));
    expect(en).toContain('Lena: ITEM-002 at A-01: not set → 9, up to 1,200');
    expect(list(render(stock, 'nb', false, 'viewer', changes))).toContain('Lena: ITEM-002 på A-01: ikke satt → 9, opp til 1\u00a0200');
    expect(list(render(stock, 'de', false, 'viewer', []))).toContain('Noch keine über diesen Bildschirm');
    expect(list(render(stock))).not.toContain('<li>'); // not asked yet
  });

  it('says in the title who set the policy from the floor UI, and when', () => {
    const at = Date.UTC(2026, 11, 2, 8, 12);
    const set = [row({ reorder_scope: 'location', reorder_point: 30, order_up_to: 90, reorder_set: { by: 'Lena', atMs: at } })];
    expect(rowOf(render(set), 'ITEM-001')).toMatch(/title="The agent proposes to order up to 90 \(set for this location\); set by Lena, [^"]*2026[^"]*"/);
    expect(rowOf(render(set, 'nb'), 'ITEM-001')).toMatch(/\(satt for denne lokasjonen\); satt av Lena, /);
    expect(rowOf(render(stock), 'ITEM-001')).not.toContain('set by');
  });

  it('says it in the chosen language', () => {
    expect(rowOf(render(stock, 'nb'), 'ITEM-002')).toContain('>under </span>10<');
    const de = render(stock, 'de');
    // A soft hyphen where the heading may break in a narrow column (1024 wide).
    expect(de).toContain('<th scope="col">Melde\u00adbestand</th>');
    expect(rowOf(de, 'ITEM-002')).toContain('title="Der Agent schlägt vor, bis 40 aufzufüllen (für diesen Lagerort gesetzt)"');
    expect(de).toContain('Nur unter dem Meldebestand');
  });

  it('shows on a row the replenishment waiting for a decision about it', () => {
    const waiting = [{ id: 'P-20261202-100000-000-4', action: 'replenish', status: 'open' as const, risk: 'low', job_id: null, resource_id: null, item: 'ITEM-002', location: 'A-01' }];
    const html = render([stock[0]!, { ...stock[1]!, waiting }]);
    expect(rowOf(html, 'ITEM-002')).toContain('data-waiting="P-20261202-100000-000-4" title="Open proposal P-20261202-100000-000-4 in the inbox">Reorder proposed →</button>');
    expect(rowOf(html, 'ITEM-001')).not.toContain('data-waiting');
  });

  it('offers a shift lead or an admin, and no one else, to change a row\'s reorder point', () => {
    for (const role of ['shift_lead', 'admin'] as const) {
      expect(rowOf(render(stock, 'en', false, role), 'ITEM-001')).toContain(
        '5</span><button type="button" class="edit-policy" data-row="ITEM-001|A-01" aria-label="Change the reorder point of ITEM-001 at A-01" aria-expanded="false">✎</button></td>',
      );
    }
    for (const role of ['viewer', 'operator'] as const) expect(render(stock, 'en', false, role)).not.toContain('edit-policy');
  });

  it('has the filter for rows under their reorder point, checked as the store says', () => {
    expect(render(stock)).toContain('<label class="filter"><input type="checkbox" name="below"/> Only below the reorder point</label>');
    expect(render(stock, 'en', true)).toContain('<input type="checkbox" name="below" checked=""/>');
  });

  it('says when the site had more rows than it shows, and how to find them', () => {
    expect(render(stock, 'en', false, 'viewer', null, true)).toContain('The first 500 rows by item and location: search for an item or a location to find the others.');
    expect(render(stock, 'de', false, 'viewer', null, true)).toContain('Die ersten 500 Zeilen nach Artikel und Lagerort');
    expect(render(stock)).not.toContain('rows-cut');
  });
});
