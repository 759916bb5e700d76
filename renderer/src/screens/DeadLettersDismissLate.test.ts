// A dismissal sent, its form left (Cancel or Escape) before the site answered, and another letter's
// dismissal begun: the first one's answer closed the second's form and wiped the note typed into
// it. An answered dismissal closes its form only while it is still the one open (as the Users
// screen's PIN reset and the Stock screen's reorder point do).
//
// No DOM here (as UsersAddedEdit.test.ts): hooks that keep their state between renders, effects not
// run, the screen's function called, its buttons pressed, its note typed into and its form sent.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { DeadLetterView, SiteApi } from '../../../core/site/api.ts';
import { createAppStore, type AppStore } from '../store/store.ts';
import { DeadLetters } from './DeadLetters.tsx';
import { elementsOf, settle } from '../testing/fake-react.ts';

const holder: { store: AppStore | null; slots: unknown[]; at: number } = { store: null, slots: [], at: 0 };

vi.mock('react', async (importOriginal) => {
  const fake = await import('../testing/fake-react.ts');
  return fake.fakeReact(await importOriginal(), () => holder.store, fake.slotHooks(() => holder));
});
vi.mock('zustand', async (importOriginal) => (await import('../testing/fake-react.ts')).fakeZustand(await importOriginal()));

const letter = (id: string, reason: string): DeadLetterView => ({ id, reason, detail: '', topic: `tilstand/demo/events/yard/doors-${id}`, payload: '{}', receivedMs: 0, status: 'open', dismissed: null });

afterEach(() => vi.unstubAllGlobals());

describe('Dead letters: a dismissal answered after its form was left', () => {
  it('leaves another letter’s dismissal, begun meanwhile, open with its note', async () => {
    // No `CSS.escape` outside a browser (the focus's selector after a form closes).
    vi.stubGlobal('CSS', { escape: (s: string) => s });
    const rows = [letter('1', 'no_contract'), letter('2', 'bad_json')];
    let answer!: () => void;
    const api = {
      dismissDeadLetters: () => new Promise((resolve) => (answer = () => resolve({ dismissed: 1, notOpen: [] }))),
      deadLetters: async () => rows,
      deadLetterGroups: async () => [],
      status: async () => null,
    } as unknown as SiteApi;
    const store = createAppStore(api);
    store.setState({ lang: 'en', user: { name: 'Kari', roles: ['shift_lead'] }, deadLetters: rows });
    holder.store = store;
    holder.slots = [];
    const render = () => ((holder.at = 0), elementsOf(DeadLetters()));
    const form = () => render().find((e) => e.type === 'tr' && e.props.className === 'dismiss-row');
    const note = () => render().find((e) => e.type === 'input' && e.props.name === 'dismissNote');
    const dismissOf = (id: string) => {
      const at = render();
      const row = at.findIndex((e) => e.type === 'tr' && e.props['data-letter'] === id);
      at.slice(row).find((e) => e.type === 'button' && e.props.className === 'dismiss')!.props.onClick!();
    };

    dismissOf('1');
    note()!.props.onChange!({ target: { value: 'test message from the vendor' } });
    render().find((e) => e.type === 'form' && e.props.className === 'dismiss')!.props.onSubmit!({ preventDefault: () => undefined });
    // Left before the site answered, and the next letter's dismissal begun.
    const at = render();
    at.slice(at.findIndex((e) => e.type === 'form')).find((e) => e.type === 'button' && e.props.type === 'button')!.props.onClick!();
    expect(form()).toBeUndefined();
    dismissOf('2');
    note()!.props.onChange!({ target: { value: 'door was closed' } });
    answer();
    await settle();
    expect(form()?.props['data-dismissing']).toBe('2');
    expect(note()?.props.value).toBe('door was closed');
  });
});

// While a dismissal is on its way its Dismiss button was `disabled`: chromium drops the focus of a
// button made disabled to the page, and a refused dismissal (the letter closed elsewhere meanwhile)
// left the keyboard focus there, not on the form still open (as Sign in, Users' Add and Stock's
// Save: test/e2e/floor-ui-focus-kept.e2e.test.ts).
describe('Dead letters: the Dismiss button while its dismissal is on its way', () => {
  it('is marked aria-disabled, not disabled, and a second press sends nothing', async () => {
    vi.stubGlobal('CSS', { escape: (s: string) => s });
    const rows = [letter('1', 'no_contract')];
    let answer!: () => void;
    let sent = 0;
    const api = {
      dismissDeadLetters: () => ((sent += 1), new Promise((resolve) => (answer = () => resolve({ dismissed: 1, notOpen: [] })))),
      deadLetters: async () => rows,
      deadLetterGroups: async () => [],
      status: async () => null,
    } as unknown as SiteApi;
    const store = createAppStore(api);
    store.setState({ lang: 'en', user: { name: 'Kari', roles: ['shift_lead'] }, deadLetters: rows });
    holder.store = store;
    holder.slots = [];
    const render = () => ((holder.at = 0), elementsOf(DeadLetters()));
    const submitButton = () => render().find((e) => e.type === 'button' && e.props.type === 'submit' && e.props.className === 'primary');
    const send = () => render().find((e) => e.type === 'form' && e.props.className === 'dismiss')!.props.onSubmit!({ preventDefault: () => undefined });
    render().find((e) => e.type === 'button' && e.props.className === 'dismiss')!.props.onClick!();
    render().find((e) => e.type === 'input' && e.props.name === 'dismissNote')!.props.onChange!({ target: { value: 'vendor test' } });
    expect(submitButton()?.props.disabled).toBeFalsy();
    send();
    expect(submitButton()?.props.disabled).toBeFalsy();
    expect(submitButton()?.props['aria-disabled']).toBe(true);
    send();
    expect(sent).toBe(1);
    answer();
    await settle();
  });
});
