// A sign-in the site never answers (a site stuck at a commit, a request the line dropped) left the
// Sign in button disabled (`signingIn`) until someone reloaded the page: nobody could sign in on
// that floor PC. It is given up after SIGN_IN_TIMEOUT_MS, the screen says so in the reader's
// language, and the next one goes out. Its answer, if it comes later, neither signs in the person
// who may have left nor keeps a session at the site that the page does not show.
import { describe, expect, it } from 'vitest';
import type { SiteApi } from '../../../core/site/api.ts';
import { fakeTimers } from '../testing/fake-timers.ts';
import { createAppStore, selectSignInErrorText, SIGN_IN_TIMEOUT_MS } from './store.ts';

function deferred<T>(): { promise: Promise<T>; resolve(v: T): void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
/** Lets the store's pending promise chains run. */
const flush = async () => {
  for (let i = 0; i < 20; i++) await Promise.resolve();
};

/** A site whose n-th sign-in answers with `answers[n]`'s promise; it records what was sent. */
function fakeApi(answers: Array<Promise<unknown>>) {
  const sent: string[] = [];
  const api = new Proxy({} as SiteApi, {
    get(_t, method: string) {
      return async (req: { user?: string; badge?: string }) => {
        sent.push(method === 'signIn' ? `signIn ${req.badge ?? req.user}` : method);
        if (method === 'signIn') return answers[sent.filter((s) => s.startsWith('signIn')).length - 1];
        return method === 'signOut' || method === 'me' ? null : [];
      };
    },
  });
  return { api, sent };
}

describe('a sign-in the site does not answer', () => {
  it('is given up after SIGN_IN_TIMEOUT_MS with a line in the reader’s language, and the next one goes out', async () => {
    const never = new Promise<unknown>(() => {});
    const { api, sent } = fakeApi([never, Promise.resolve({ name: 'Kari', roles: ['shift_lead'] })]);
    const clock = fakeTimers();
    const store = createAppStore(api, clock.timers);
    const first = store.getState().signIn('Kari', '1234');
    await flush();
    clock.advance(SIGN_IN_TIMEOUT_MS - 1);
    await flush();
    expect(store.getState().signingIn).toBe(true);
    clock.advance(1);
    await first;
    expect(store.getState()).toMatchObject({ signingIn: false, user: null });
    const line = (lang: 'en' | 'nb' | 'de') => selectSignInErrorText({ ...store.getState(), lang });
    expect(line('en')).toBe('Something went wrong: the site did not answer the sign-in within 15 secs; sign in again, and tell IT if it keeps happening');
    expect(line('nb')).toBe('Noe gikk galt: stedet svarte ikke på innloggingen innen 15 sek; logg inn på nytt, og si fra til IT om det skjer igjen');
    expect(line('de')).toBe('Etwas ist schiefgelaufen: der Standort hat die Anmeldung nicht innerhalb von 15 Sek. beantwortet; erneut anmelden und die IT informieren, wenn es wieder passiert');
    // Tried again, it goes out and signs in; the line goes.
    await store.getState().signIn('Kari', '1234');
    expect(sent.filter((s) => s.startsWith('signIn'))).toEqual(['signIn Kari', 'signIn Kari']);
    expect(store.getState()).toMatchObject({ user: { name: 'Kari' }, signInError: null, signingIn: false });
    expect(clock.pending()).toBe(0);
  });

  it('by badge too', async () => {
    const { api } = fakeApi([new Promise<unknown>(() => {})]);
    const clock = fakeTimers();
    const store = createAppStore(api, clock.timers);
    const scan = store.getState().signInBadge('0042');
    await flush();
    clock.advance(SIGN_IN_TIMEOUT_MS);
    await scan;
    expect(store.getState().signingIn).toBe(false);
    expect(selectSignInErrorText(store.getState())).toMatch(/did not answer the sign-in/);
  });

  it('answered after it was given up, it signs nobody in, and its session at the site is ended', async () => {
    const late = deferred<unknown>();
    const { api, sent } = fakeApi([late.promise]);
    const clock = fakeTimers();
    const store = createAppStore(api, clock.timers);
    const first = store.getState().signIn('Kari', '1234');
    await flush();
    clock.advance(SIGN_IN_TIMEOUT_MS);
    await first;
    late.resolve({ name: 'Kari', roles: ['shift_lead'] });
    await flush();
    expect(store.getState().user).toBeNull();
    expect(sent).toEqual(['signIn Kari', 'signOut']);
    // The screen still says why the last one failed.
    expect(selectSignInErrorText(store.getState())).toMatch(/did not answer the sign-in/);
  });

  it('answered after the next sign-in went out, it neither signs in nor ends the newer session', async () => {
    const late = deferred<unknown>();
    const { api, sent } = fakeApi([late.promise, Promise.resolve({ name: 'Ola', roles: ['operator'] })]);
    const clock = fakeTimers();
    const store = createAppStore(api, clock.timers);
    const first = store.getState().signIn('Kari', '1234');
    await flush();
    clock.advance(SIGN_IN_TIMEOUT_MS);
    await first;
    await store.getState().signIn('Ola', '9876');
    late.resolve({ name: 'Kari', roles: ['shift_lead'] });
    await flush();
    expect(store.getState().user).toEqual({ name: 'Ola', roles: ['operator'] });
    expect(sent.filter((s) => s !== 'listProposals')).toEqual(['signIn Kari', 'signIn Ola']);
  });
});
