// The History screen after a read the site refused: the line "Rows containing …" said the filter
// just asked for while the rows were still the last read's, read with another filter (or none).
// The filter said is now the one the rows on the screen were read with, kept with them in the
// store; the error line says why the new read failed.
//
// No DOM here (as UsersAddedEdit.test.ts): hooks that keep their state between renders, the
// screen's function called, its form sent through onSubmit and typed into through onChange.
import { describe, expect, it, vi } from 'vitest';
import type { HistoryResult, SiteApi } from '../../../core/site/api.ts';
import { translate } from '../i18n/messages.ts';
import { createAppStore, type AppStore } from '../store/store.ts';
import { History } from './History.tsx';
import { elementsOf, settle, textOf } from '../testing/fake-react.ts';

const holder: { store: AppStore | null; slots: unknown[]; at: number } = { store: null, slots: [], at: 0 };

vi.mock('react', async (importOriginal) => {
  // Effects not run (the read on opening): the test reads through the form.
  const fake = await import('../testing/fake-react.ts');
  return fake.fakeReact(await importOriginal(), () => holder.store, fake.slotHooks(() => holder));
});
vi.mock('zustand', async (importOriginal) => (await import('../testing/fake-react.ts')).fakeZustand(await importOriginal()));

const result = (rows: unknown[][]): HistoryResult => ({ table: 'stock', snapshotId: 41, snapshotMs: 0, columns: ['item', 'on_hand'], types: ['STRING NOT NULL', 'INT'], rows, more: false });
const filtered = (q: string) => translate('en', 'history.filtered', { q });

/** The screen over a site that answers the first read (all rows, or those with `ITEM-001`) and refuses the next. */
function screen() {
  let reads = 0;
  const asked: unknown[] = [];
  const site = {
    tables: async () => [],
    tags: async () => [],
    history: async (req: { contains?: string }) => {
      asked.push(req.contains);
      if (reads++ > 0) throw Object.assign(new Error('the site is busy'), { kind: 'internal' });
      return result(req.contains ? [['ITEM-001', 4]] : [['ITEM-001', 4], ['ITEM-002', 9]]);
    },
    diff: async () => {
      throw Object.assign(new Error('the site is busy'), { kind: 'internal' });
    },
  };
  const store = createAppStore(site as unknown as SiteApi);
  store.setState({ lang: 'en', tables: [], tags: [], history: null, diff: null });
  holder.store = store;
  holder.slots = [];
  const render = () => ((holder.at = 0), elementsOf(History()));
  const type = (name: string, v: string) => render().find((e) => e.type === 'input' && e.props.name === name)!.props.onChange!({ target: { value: v } });
  const show = async () => {
    render().find((e) => e.type === 'form')!.props.onSubmit!({ preventDefault: () => undefined });
    await settle();
  };
  const compare = async () => {
    render().find((e) => e.type === 'button' && e.props.type === 'button')!.props.onClick!();
    await settle();
  };
  const said = () => render().filter((e) => e.type === 'p').map((e) => textOf(e.props.children));
  const rows = () => render().filter((e) => e.type === 'tr').length - 1; // less the heading's row
  return { store, type, show, compare, said, rows, asked };
}

describe('History: the filter said after a read that failed', () => {
  it('is the filter of the rows still shown, not the one the failed read asked for', async () => {
    const s = screen();
    await s.show(); // all rows, no filter
    expect(s.rows()).toBe(2);
    s.type('contains', 'ITEM-001');
    await s.show(); // refused
    expect(s.asked).toEqual([undefined, 'ITEM-001']);
    expect(s.store.getState().error).toBe('the site is busy');
    expect(s.rows()).toBe(2);
    expect(s.said().filter((p) => p === filtered('ITEM-001'))).toEqual([]);
  });

  it('keeps saying the filter the rows were read with when a read with another fails', async () => {
    const s = screen();
    s.type('contains', ' ITEM-001 ');
    await s.show(); // the rows with ITEM-001
    expect(s.rows()).toBe(1);
    expect(s.said()).toContain(filtered('ITEM-001'));
    s.type('contains', '');
    await s.show(); // all rows asked for, refused
    expect(s.rows()).toBe(1);
    expect(s.said()).toContain(filtered('ITEM-001'));
    // A comparison refused as well: the rows and their filter stay.
    s.type('contains', 'ITEM-404');
    await s.compare();
    expect(s.rows()).toBe(1);
    expect(s.said()).toContain(filtered('ITEM-001'));
    expect(s.said().filter((p) => p === filtered('ITEM-404'))).toEqual([]);
  });
});
