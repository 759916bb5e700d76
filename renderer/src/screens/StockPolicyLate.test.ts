// A reorder point saved, its form closed (Cancel or Escape) before the site answered, and another
// row's form opened: the first save's answer closed the form the lead was now typing in. A saved
// form closes only while it is still the one open (as the Users screen's PIN reset does).
//
// No DOM here (as UsersAddedEdit.test.ts): hooks that keep their state between renders, effects not
// run, the screen's function called, its buttons pressed and its form sent through onSubmit.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SiteApi, StockView } from '../../../core/site/api.ts';
import { createAppStore, type AppStore } from '../store/store.ts';
import { Stock } from './Stock.tsx';
import { elementsOf, settle, type FakeElement } from '../testing/fake-react.ts';

const holder: { store: AppStore | null; slots: unknown[]; at: number } = { store: null, slots: [], at: 0 };

vi.mock('react', async (importOriginal) => {
  const fake = await import('../testing/fake-react.ts');
  return fake.fakeReact(await importOriginal(), () => holder.store, fake.slotHooks(() => holder));
});
vi.mock('zustand', async (importOriginal) => (await import('../testing/fake-react.ts')).fakeZustand(await importOriginal()));

const row = (item: string): StockView => ({
  item, location: 'A-01', on_hand: 30, reserved: 4, inbound: 0, available: 26, projected: 26, reorder_point: 5, order_up_to: 20,
  reorder_scope: 'default', reorder_set: null, item_policy: null, below_reorder_point: false, waiting: [],
});

afterEach(() => vi.unstubAllGlobals());

describe('Stock: a reorder point saved after its form was left', () => {
  it('does not close another row’s form opened meanwhile', async () => {
    // No `CSS.escape` outside a browser (the focus's selector after a form closes).
    vi.stubGlobal('CSS', { escape: (s: string) => s });
    let answer!: () => void;
    const api = {
      setReorderPolicy: () => new Promise<null>((resolve) => (answer = () => resolve(null))),
      stock: async () => [row('ITEM-001'), row('ITEM-002')],
    } as unknown as SiteApi;
    const store = createAppStore(api);
    store.setState({ lang: 'en', user: { name: 'Lena', roles: ['shift_lead'] }, stock: [row('ITEM-001'), row('ITEM-002')] });
    holder.store = store;
    holder.slots = [];
    const render = () => ((holder.at = 0), elementsOf(Stock()));
    const form = () => render().find((e) => e.type === 'form' && e.props.className === 'policy-form');
    const press = (find: (e: FakeElement) => boolean) => render().find((e) => e.type === 'button' && find(e))!.props.onClick!();

    press((e) => e.props['data-row'] === 'ITEM-001|A-01');
    form()!.props.onSubmit!({ preventDefault: () => undefined });
    // Left before the site answered, and the next row's opened.
    press((e) => e.props.name === 'cancel');
    expect(form()).toBeUndefined();
    press((e) => e.props['data-row'] === 'ITEM-002|A-01');
    expect(form()?.props['aria-label']).toBe('Reorder point of ITEM-002 at A-01');
    answer();
    await settle();
    expect(form()?.props['aria-label']).toBe('Reorder point of ITEM-002 at A-01');
  });
});
