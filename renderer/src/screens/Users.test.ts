// The Users screen rendered from the store's state (server-side markup, no browser): the signed-in
// admin's own row has no Disable button (the site refuses it), and roles read in the chosen
// language. The PIN or password reset in the row is driven in chromium (test/e2e/floor-ui.e2e.test.ts).
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { SiteApi, UserView } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { translate } from '../i18n/messages.ts';
import { createAppStore } from '../store/store.ts';
import { secretSetKey, Users } from './Users.tsx';

const USERS: UserView[] = [
  { name: 'Ada', roles: ['admin'], disabled: false, hasBadge: false },
  { name: 'Per', roles: ['operator'], disabled: false, hasBadge: true },
  { name: 'Kari', roles: ['shift_lead'], disabled: true, hasBadge: false },
] as UserView[];

function render(lang: 'en' | 'nb' | 'de' = 'en', usersBusy = false): string {
  const store = createAppStore({ users: async () => USERS } as unknown as SiteApi);
  store.setState({ users: USERS, lang, user: { name: 'Ada', roles: ['admin'] }, usersBusy });
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(Users)));
}

const rowOf = (html: string, name: string): string => {
  const m = new RegExp(`<tr data-user="${name}">.*?</tr>`).exec(html);
  expect(m, `${name}'s row`).not.toBeNull();
  return m![0];
};

describe('Users screen', () => {
  it("offers no Disable on the signed-in admin's own row, and marks it", () => {
    const html = render();
    expect(rowOf(html, 'Ada')).toContain('Ada (you)');
    expect(rowOf(html, 'Ada')).not.toContain('>Disable<');
    expect(rowOf(html, 'Per')).toContain('>Disable<');
    expect(rowOf(html, 'Kari')).toContain('>Enable<');
    expect(rowOf(html, 'Kari')).toContain('(disabled)');
  });

  it('names roles in the chosen language, in the list and in the form', () => {
    const en = render();
    expect(rowOf(en, 'Kari')).toContain('<td>Shift lead</td>');
    expect(en).toContain('<option value="shift_lead">Shift lead</option>');
    expect(rowOf(render('nb'), 'Per')).toContain('<td>Operatør</td>');
    expect(rowOf(render('de'), 'Ada')).toContain('<td>Administrator</td>');
  });

  it('calls the column and the field "role": a user has one', () => {
    expect(render()).toMatch(/<th[^>]*>Role<\/th>/);
    expect(render('nb')).toMatch(/<th[^>]*>Rolle<\/th>/);
    expect(render('de')).toMatch(/<th[^>]*>Rolle<\/th>/);
    expect(render()).not.toContain('Roles');
  });

  it('disables Disable and Enable while a change to the users is on its way, and enables them after', () => {
    const busy = render('en', true);
    // aria-disabled, not disabled: a disabled button drops the keyboard focus to the page.
    expect(rowOf(busy, 'Per')).toContain('<button aria-disabled="true">Disable</button>');
    expect(rowOf(busy, 'Kari')).toContain('<button aria-disabled="true">Enable</button>');
    expect(rowOf(busy, 'Per')).not.toContain('disabled=""');
    expect(rowOf(render(), 'Per')).toContain('<button>Disable</button>');
  });

  it('labels the secret field for what the site takes (a PIN or a password), in every language', () => {
    const field = (html: string) => /<label>([^<]*)<input [^>]*name="newSecret"/.exec(html)?.[1];
    expect(field(render())).toBe('PIN or password'); // was "New PIN": a password was taken too
    expect(field(render('nb'))).toBe('PIN eller passord');
    expect(field(render('de'))).toBe('PIN oder Passwort');
  });

  it('names the reset for what it sets (a PIN or a password), in every language', () => {
    const button = (html: string) => /<button class="reset">([^<]*)<\/button>/.exec(rowOf(html, 'Per'))?.[1];
    expect(button(render())).toBe('Reset PIN or password'); // was "Reset PIN": a password was taken too
    expect(button(render('nb'))).toBe('Ny PIN eller nytt passord');
    expect(button(render('de'))).toBe('PIN oder Passwort zurücksetzen');
  });

  it('confirms a reset as the PIN or the password it was, by the rule the site takes it by', () => {
    expect(translate('en', secretSetKey('8642'), { name: 'Per' })).toBe('New PIN set for Per (it replaces their password, if they had one).');
    expect(translate('en', secretSetKey('048613579246'), { name: 'Per' })).toBe('New PIN set for Per (it replaces their password, if they had one).');
    // 13 digits or anything not all digits: a password (core/site service.ts secretOf).
    expect(translate('en', secretSetKey('0486135792461'), { name: 'Per' })).toBe('New password set for Per (it replaces their PIN, if they had one).');
    expect(translate('en', secretSetKey('correct horse'), { name: 'Per' })).toBe('New password set for Per (it replaces their PIN, if they had one).');
    expect(translate('nb', secretSetKey('lang passordfrase'), { name: 'Per' })).toBe('Nytt passord er satt for Per (det erstatter PIN-en, om brukeren hadde en).');
    expect(translate('de', secretSetKey('8642'), { name: 'Per' })).toBe('Neue PIN für Per gesetzt (sie ersetzt das Passwort, falls vorhanden).');
    expect(translate('de', secretSetKey('langes Passwort'), { name: 'Per' })).toBe('Neues Passwort für Per gesetzt (es ersetzt die PIN, falls vorhanden).');
  });

  it('says whether each user has a badge, never the badge (the site sends only whether)', () => {
    expect(render()).toMatch(/<th[^>]*>Badge<\/th>/);
    expect(rowOf(render(), 'Per')).toContain('<td class="has-badge">yes</td>');
    expect(rowOf(render(), 'Ada')).toContain('<td class="has-badge">no</td>');
    expect(rowOf(render('nb'), 'Per')).toContain('<td class="has-badge">ja</td>');
    expect(rowOf(render('de'), 'Kari')).toContain('<td class="has-badge">nein</td>');
    expect(render('de')).toMatch(/<th[^>]*>Ausweis<\/th>/);
  });

  it('offers a badge for a new user (the sign-in screen takes a badge scan), masked and optional', () => {
    const label = (html: string) => /<label>([^<]*)<input type="password" autoComplete="off" name="badge" value=""\/><\/label>/.exec(html)?.[1];
    expect(label(render())).toBe('Badge (optional: scan it here)');
    expect(label(render('nb'))).toBe('Kort (valgfritt: skann det her)');
    expect(label(render('de'))).toBe('Ausweis (optional: hier scannen)');
  });

  it('sends the badge with a new user to the site, and none when the field is empty', async () => {
    const sent: unknown[] = [];
    const store = createAppStore({ addUser: async (req: unknown) => (sent.push(req), { name: 'Per', roles: ['operator'], disabled: false }), users: async () => USERS } as unknown as SiteApi);
    expect(await store.getState().addUser('Per', ['operator'], '0451', 'B-0042')).toBe(true);
    expect(await store.getState().addUser('Ola', ['operator'], '0452', '')).toBe(true);
    expect(sent).toEqual([
      { name: 'Per', roles: ['operator'], secret: '0451', badge: 'B-0042' },
      { name: 'Ola', roles: ['operator'], secret: '0452' },
    ]);
  });
});
