// A PIN or password is sent once, as a badge scan is: left in its (masked) field after a refusal,
// the next digits typed into it — the same person's second try, or the next person's — were added
// to it, and "1235" then "1234" went out as "12351234", one more attempt towards the lockout with
// nothing on the screen to say why. The name stays (the person types only the PIN again).
//
// No DOM here: React's hooks are replaced by minimal ones that keep their state between renders
// (testing/fake-react.ts slotHooks), the screen's function is called, typed into through its fields'
// onChange and sent through its form's onSubmit.
import { describe, expect, it, vi } from 'vitest';
import { refusingSignIn, type SignInHolder } from './testing/sign-in.ts';

const holder: SignInHolder = { store: null, slots: [], at: 0 };

vi.mock('react', async (importOriginal) => {
  const fake = await import('../testing/fake-react.ts');
  return fake.fakeReact(await importOriginal(), () => holder.store, fake.slotHooks(() => holder));
});
vi.mock('zustand', async (importOriginal) => (await import('../testing/fake-react.ts')).fakeZustand(await importOriginal()));

/** The sign-in screen over a site that refuses every sign-in as a wrong PIN (testing/sign-in.ts). */
const screen = () => refusingSignIn(holder);

describe('sign-in screen: a PIN is sent once', () => {
  it('a refused PIN leaves its field, the name stays; the PIN typed next goes out alone', async () => {
    const s = screen();
    s.change('user', 'Kari');
    s.change('secret', '1235');
    await s.send();
    expect(s.store.getState().signInError).toMatch(/wrong/);
    expect(s.field('secret').props.value).toBe('');
    expect(s.field('user').props.value).toBe('Kari');
    // Typed on from what the field holds, as a keyboard does.
    s.change('secret', `${s.field('secret').props.value}1234`);
    await s.send();
    expect(s.sent).toEqual(['Kari/1235', 'Kari/1234']);
  });
});
