// The site's refusals in the reader's language: a refusal that carries a code (core/site/api.ts
// RefusalCode) is worded in en, nb and de on the error line and the sign-in screen; for a code this
// UI does not know, the site's English message is shown. Through the real client, store and
// screens (server-side markup), the site answering as its transports do.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { ApiErrorBody, ApiResult, SiteApi } from '../../../core/site/api.ts';
import { App } from '../App.tsx';
import { createClient } from '../api/client.ts';
import { StoreContext } from '../context.tsx';
import { FirstRun } from '../screens/FirstRun.tsx';
import { SignIn } from '../screens/SignIn.tsx';
import { createAppStore } from '../store/store.ts';
import { refusalText, type Lang } from './messages.ts';

/** A store whose site refuses every call with `error` (addUser, signIn), else answers empty. */
function storeRefusing(error: ApiErrorBody) {
  const bridge = {
    call: async (method: string): Promise<ApiResult<unknown>> => (method === 'addUser' || method === 'signIn' || method === 'initSite' ? { ok: false, error } : { ok: true, value: [] }),
    subscribe: () => () => {},
  };
  const store = createAppStore(createClient(() => null, bridge) as unknown as SiteApi);
  store.setState({ firstRun: { initialized: true } as never });
  return store;
}

function renderApp(store: ReturnType<typeof storeRefusing>, lang: Lang): string {
  store.setState({ lang });
  // Server-side markup reads the store's initial state (useSyncExternalStore): the current one here.
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(App)));
}

function renderSignIn(store: ReturnType<typeof storeRefusing>, lang: Lang): string {
  store.setState({ lang });
  // Server-side markup reads the store's initial state (useSyncExternalStore): the current one here.
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(SignIn)));
}

const alertOf = (html: string): string => {
  const m = /<p role="alert" class="error"[^>]*>(.*?)<\/p>/.exec(html);
  expect(m, 'the error line').not.toBeNull();
  return m![1]!.replace(/<[^>]+>/g, '');
};

const GUESSABLE: ApiErrorBody = {
  kind: 'invalid',
  message: 'secret: PIN 1111: one digit repeated is among the first a colleague would try (five wrong PINs lock the user); choose another',
  code: 'pin.guessable',
  params: { pin: '1111', why: 'repeated' },
};

describe('the site refusals in the reader’s language', () => {
  it('words a guessable PIN on the error line in en, nb and de, not with the site’s message', async () => {
    const store = storeRefusing(GUESSABLE);
    store.setState({ user: { name: 'Ada', roles: ['admin'] }, screen: 'users' });
    expect(await store.getState().addUser('Easy', ['operator'], '1111')).toBe(false);
    // A refusal reads as itself, not framed as a failure (error-line.test.ts).
    expect(alertOf(renderApp(store, 'nb'))).toMatch(/^PIN 1111: ett siffer gjentatt er blant det første en kollega ville prøve/);
    expect(alertOf(renderApp(store, 'nb'))).not.toMatch(/one digit repeated/);
    expect(alertOf(renderApp(store, 'de'))).toMatch(/^PIN 1111: eine wiederholte Ziffer gehört zum Ersten/);
    expect(alertOf(renderApp(store, 'en'))).toBe('PIN 1111: one digit repeated is among the first a colleague would try (five wrong PINs lock the user); choose another✖');
  });

  it('shows the English message for a code it does not know, and for a known code without its params', async () => {
    const unknown = storeRefusing({ kind: 'conflict', message: 'the new thing is refused', code: 'some.newerCode', params: { x: 1 } } as never);
    unknown.setState({ user: { name: 'Ada', roles: ['admin'] }, screen: 'users' });
    await unknown.getState().addUser('Easy', ['operator'], '5820');
    expect(alertOf(renderApp(unknown, 'nb'))).toBe('the new thing is refused✖');
    expect(alertOf(renderApp(unknown, 'de'))).toBe('the new thing is refused✖');
    expect(refusalText('nb', { message: 'proposal P-1 is gone', code: 'proposal.notOpen', params: { id: 'P-1' } })).toBe('proposal P-1 is gone');
    expect(refusalText('de', { message: 'no code at all' })).toBe('no code at all');
  });

  it('words a wrong PIN at sign-in with the attempts left, and a lockout with its time', async () => {
    const wrong = storeRefusing({ kind: 'unauthenticated', message: 'sign-in refused: wrong name, PIN or password (4 attempts left)', code: 'signin.wrong', params: { left: 4 } });
    await wrong.getState().signIn('Per', '9182');
    expect(renderSignIn(wrong, 'nb')).toContain('Feil navn, PIN eller passord (4 forsøk igjen)');
    expect(renderSignIn(wrong, 'de')).toContain('Falscher Name, falsche PIN oder falsches Passwort (noch 4 Versuche)');
    expect(renderSignIn(wrong, 'en')).toContain('Wrong name, PIN or password (4 attempts left)');
    expect(renderSignIn(wrong, 'en')).not.toContain('sign-in refused');
    const untilMs = Date.UTC(2026, 11, 5, 9, 30);
    const locked = storeRefusing({ kind: 'unauthenticated', message: 'sign-in refused: locked until …', code: 'signin.locked', params: { untilMs } });
    await locked.getState().signIn('Per', '9182');
    const time = new Intl.DateTimeFormat('nb-NO', { hour: '2-digit', minute: '2-digit' }).format(untilMs);
    expect(renderSignIn(locked, 'nb')).toMatch(new RegExp(`Sperret til [^<]*${time}[^<]* etter for mange feil forsøk`));
  });

  it('words a guessable first admin PIN on the first-run screen', async () => {
    const store = storeRefusing({ kind: 'invalid', message: 'adminPin: PIN 9876: digits in a row are among the first a colleague would try (five wrong PINs lock the user); choose another', code: 'pin.guessable', params: { pin: '9876', why: 'sequence' } });
    store.setState({ firstRun: { initialized: false, siteId: null, restoredSite: null } });
    await store.getState().initSite('osl1', 'Ada', '9876');
    const render = (lang: Lang) => {
      store.setState({ lang });
      store.getInitialState = store.getState;
      return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(FirstRun)));
    };
    expect(render('de')).toContain('PIN 9876: Ziffern in Folge gehören zum Ersten');
    expect(render('nb')).toContain('PIN 9876: sifre på rad er blant det første');
    expect(render('en')).toContain('PIN 9876: digits in a row are among the first');
    expect(render('en')).not.toContain('adminPin: PIN');
  });

  it('words a role that may not, an already decided proposal and a name taken', () => {
    const role = { message: 'Olav is operator; only a shift lead or an admin decides', code: 'role.refused', params: { user: 'Olav', role: 'operator', allowed: 'shift_lead,admin' } };
    expect(refusalText('nb', role)).toBe('Olav er operatør; dette krever skiftleder eller administrator');
    expect(refusalText('de', role)).toBe('Olav ist Bediener; dafür braucht es Schichtleitung oder Administrator');
    expect(refusalText('en', role)).toBe('Olav is Operator; this takes Shift lead or Admin');
    const decided = { message: 'proposal P-7 is rejected (…); only open or deferred proposals can be decided', code: 'proposal.notOpen', params: { id: 'P-7', status: 'rejected' } };
    expect(refusalText('nb', decided)).toBe('Forslag P-7 er allerede avvist; bare åpne eller utsatte forslag kan avgjøres');
    expect(refusalText('de', { message: "user 'Per' already exists", code: 'user.exists', params: { name: 'Per' } })).toBe('Einen Benutzer Per gibt es bereits (Namen, die sich nur in Groß-/Kleinschreibung, Leerzeichen oder unsichtbaren Zeichen unterscheiden, lesen sich gleich)');
    // A look-alike name is refused naming the user it looks like (core/inbox users.ts lookalikeKey).
    expect(refusalText('en', { message: 'user name "anna" looks like the existing user \'Anna\' (…); choose another', code: 'user.exists', params: { name: 'Anna' } })).toBe(
      'There is already a user Anna (names that differ only in case, spaces or invisible characters read as one)',
    );
  });
});
