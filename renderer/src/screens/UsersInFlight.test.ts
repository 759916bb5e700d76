// The Users screen's forms while a change is on its way: the add form emptied when the site took a
// user, whatever the fields held by then, so the next user's name, typed while the last one was
// being added, was lost; a PIN reset taken closed whichever reset form was open by then and emptied
// its field. Now only the values the request sent are cleared, and only when it succeeded.
//
// No DOM here (as UsersAddedEdit.test.ts): hooks that keep their state between renders, the
// screen's function called, its forms sent through onSubmit and typed into through onChange.
import { describe, expect, it, vi } from 'vitest';
import type { SiteApi, UserView } from '../../../core/site/api.ts';
import { createAppStore, type AppStore } from '../store/store.ts';
import { Users } from './Users.tsx';
import { elementsOf, settle } from '../testing/fake-react.ts';

const holder: { store: AppStore | null; slots: unknown[]; at: number } = { store: null, slots: [], at: 0 };

vi.mock('react', async (importOriginal) => {
  const fake = await import('../testing/fake-react.ts');
  return fake.fakeReact(await importOriginal(), () => holder.store, fake.slotHooks(() => holder));
});
vi.mock('zustand', async (importOriginal) => (await import('../testing/fake-react.ts')).fakeZustand(await importOriginal()));
// The reset names the row to give the focus back to by CSS.escape, a browser's.
vi.stubGlobal('CSS', { escape: (s: string) => s });

const USERS: UserView[] = [
  { name: 'Ada', roles: ['admin'], disabled: false, hasBadge: false },
  { name: 'Per', roles: ['operator'], disabled: false, hasBadge: false },
  { name: 'Kari', roles: ['operator'], disabled: false, hasBadge: false },
] as UserView[];

/** A site whose adds and resets wait until the test answers them (`answer`: taken, or refused). */
function screen() {
  const waiting: { ok: () => void; fail: () => void }[] = [];
  const held = () =>
    new Promise<undefined>((ok, fail) => void waiting.push({ ok: () => ok(undefined), fail: () => fail(Object.assign(new Error('refused'), { kind: 'conflict' })) }));
  const store = createAppStore({ addUser: held, resetSecret: held, users: async () => USERS } as unknown as SiteApi);
  store.setState({ users: USERS, lang: 'en', user: { name: 'Ada', roles: ['admin'] } });
  holder.store = store;
  holder.slots = [];
  const render = () => ((holder.at = 0), elementsOf(Users()));
  const field = (name: string) => render().find((e) => e.type === 'input' || e.type === 'select' ? e.props.name === name : false)!;
  const value = (name: string) => field(name)?.props.value;
  const type = (name: string, v: string) => field(name).props.onChange!({ target: { value: v } });
  const submit = (className: string) => render().find((e) => e.type === 'form' && e.props.className === className)!.props.onSubmit!({ preventDefault: () => undefined });
  const resetButton = (user: string) => {
    const rows = render().filter((e) => e.type === 'tr' && e.props['data-user'] === user);
    return elementsOf(rows[0]!.props.children).find((e) => e.type === 'button' && e.props.className === 'reset');
  };
  const answer = async (ok: boolean) => {
    const w = waiting.shift()!;
    if (ok) w.ok();
    else w.fail();
    await settle();
  };
  return { store, render, value, type, submit, resetButton, answer };
}

describe('Users: the forms while a change is on its way', () => {
  it('keeps what is typed for the next user while the last one is added, and clears only what was sent', async () => {
    const s = screen();
    s.type('name', 'Ola');
    s.type('newSecret', '0451');
    s.type('badge', 'B-1');
    s.submit('add-user');
    await settle();
    // The next user begun while Ola is on the way: name and badge retyped, the PIN not yet.
    s.type('name', 'Kari Nordmann');
    s.type('badge', 'B-2');
    await s.answer(true);
    expect(s.value('name')).toBe('Kari Nordmann');
    expect(s.value('badge')).toBe('B-2');
    expect(s.value('newSecret')).toBe(''); // Ola's PIN, sent and taken: cleared
  });

  it('keeps every field when the site refuses the user', async () => {
    const s = screen();
    s.type('name', 'Ola');
    s.type('newSecret', '0451');
    s.submit('add-user');
    await settle();
    await s.answer(false);
    expect([s.value('name'), s.value('newSecret')]).toEqual(['Ola', '0451']);
  });

  it('keeps the add form as typed while the list is read again (a live event, a refresh)', async () => {
    const s = screen();
    s.type('name', 'Ola');
    s.type('newSecret', '0451');
    await s.store.getState().loadUsers();
    s.store.setState({ users: [...USERS] });
    expect([s.value('name'), s.value('newSecret')]).toEqual(['Ola', '0451']);
  });

  it("leaves another user's reset form open, as typed, when a reset sent before is taken", async () => {
    const s = screen();
    s.resetButton('Per')!.props.onClick!();
    s.type('resetSecret', '8642');
    s.submit('reset-secret');
    await settle();
    // Kari's reset begun while Per's is on its way.
    s.resetButton('Kari')!.props.onClick!();
    s.type('resetSecret', '9753');
    await s.answer(true);
    expect(s.value('resetSecret')).toBe('9753');
    expect(s.resetButton('Kari')).toBeUndefined(); // her form still open
    expect(s.resetButton('Per')).toBeDefined();
  });

  it('closes the reset form and empties it when the reset it sent is taken and nothing was typed since', async () => {
    const s = screen();
    s.resetButton('Per')!.props.onClick!();
    s.type('resetSecret', '8642');
    s.submit('reset-secret');
    await settle();
    await s.answer(true);
    expect(s.value('resetSecret')).toBeUndefined();
    expect(s.resetButton('Per')).toBeDefined();
    expect(s.render().some((e) => e.type === 'p' && e.props.role === 'status')).toBe(true);
  });
});
