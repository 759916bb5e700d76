// The Users screen's confirmation of a user added goes once the form is typed into again: "Added
// Ola (Operator)." stayed while the next user was typed, and read as said of them. A real
// confirmation line says the last thing done until the next is begun.
//
// No DOM here: React's hooks are replaced by minimal ones that keep their state between renders
// (as in DeadLettersFilter.test.ts, with state), the screen's function is called, the form sent
// through its onSubmit and typed into through its fields' onChange.
import { describe, expect, it, vi } from 'vitest';
import type { SiteApi, UserView } from '../../../core/site/api.ts';
import { createAppStore, type AppStore } from '../store/store.ts';
import { NEW_USERS_FORM, usersForm, Users } from './Users.tsx';
import { elementsOf, settle, textOf } from '../testing/fake-react.ts';

const holder: { store: AppStore | null; slots: unknown[]; at: number } = { store: null, slots: [], at: 0 };

vi.mock('react', async (importOriginal) => {
  // Effects not run (the screen's load on mount): the test sets the users itself.
  const fake = await import('../testing/fake-react.ts');
  return fake.fakeReact(await importOriginal(), () => holder.store, fake.slotHooks(() => holder));
});
vi.mock('zustand', async (importOriginal) => (await import('../testing/fake-react.ts')).fakeZustand(await importOriginal()));

const USERS: UserView[] = [{ name: 'Ada', roles: ['admin'], disabled: false, hasBadge: false }] as UserView[];

/** The screen for an admin over a site that adds every user; `render` calls it again, as React would after a change. */
function screen() {
  const store = createAppStore({ addUser: async () => undefined, users: async () => USERS } as unknown as SiteApi);
  store.setState({ users: USERS, lang: 'en', user: { name: 'Ada', roles: ['admin'] } });
  holder.store = store;
  holder.slots = [];
  const render = () => ((holder.at = 0), elementsOf(Users()));
  const field = (name: string) => render().find((e) => e.type !== 'label' && e.props.name === name)!;
  const type = (name: string, value: string) => field(name).props.onChange!({ target: { value } });
  const confirmation = () => render().filter((e) => e.type === 'p' && e.props.role === 'status').map((e) => textOf(e.props.children));
  const send = async () => {
    render().find((e) => e.type === 'form' && e.props.className === 'add-user')!.props.onSubmit!({ preventDefault: () => undefined });
    await settle();
  };
  return { render, field, type, confirmation, send };
}

describe('Users: the confirmation of a user added', () => {
  it('says who was added, and goes when the form is typed into again', async () => {
    const s = screen();
    s.type('name', 'Ola');
    s.type('newSecret', '0451');
    expect(s.confirmation()).toEqual([]);
    await s.send();
    expect(s.confirmation()).toEqual(['Added Ola (Operator).']);
    expect(s.field('name').props.value).toBe('');
    // The next user begun: the line about Ola goes, what is typed stays.
    s.type('name', 'K');
    expect(s.confirmation()).toEqual([]);
    expect(s.field('name').props.value).toBe('K');
  });

  it('goes on any field of the form: the role, the PIN, the badge', async () => {
    for (const [name, value] of [['role', 'viewer'], ['newSecret', '1'], ['badge', 'B']] as const) {
      const s = screen();
      s.type('name', 'Ola');
      s.type('newSecret', '0451');
      await s.send();
      expect(s.confirmation(), name).toEqual(['Added Ola (Operator).']);
      s.type(name, value);
      expect(s.confirmation(), name).toEqual([]);
      expect(s.field(name).props.value, name).toBe(value);
    }
  });

  it('empties the fields but the role when a user is added; an edit keeps the rest of the form', () => {
    const typed = usersForm(usersForm(NEW_USERS_FORM, { edit: { name: 'Ola', role: 'shift_lead', secret: '0451', badge: 'B-1' } }), { edit: { badge: 'B-2' } });
    expect(typed).toEqual({ fields: { name: 'Ola', role: 'shift_lead', secret: '0451', badge: 'B-2' }, done: null });
    const added = usersForm(typed, { added: { name: 'Ola', role: 'shift_lead' }, sent: { name: 'Ola', secret: '0451', badge: 'B-2' } });
    expect(added).toEqual({ fields: { name: '', role: 'shift_lead', secret: '', badge: '' }, done: { key: 'users.added', added: { name: 'Ola', role: 'shift_lead' } } });
    // A reset's confirmation leaves the form as it is, and goes on an edit as well.
    const reset = usersForm(usersForm(typed, { edit: { name: 'Kari' } }), { done: { key: 'users.pinSet', name: 'Per' } });
    expect(reset.fields.name).toBe('Kari');
    expect(usersForm(reset, { edit: { name: 'Karin' } }).done).toBeNull();
  });
});
