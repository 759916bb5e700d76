// The Users screen's confirmation of a user added (server-side markup, no browser): the form
// emptied with no word, so it looked as if nothing had happened, while a PIN reset says "New PIN
// set for …". Now it says who was added with which role, in en, nb and de, and nothing when the
// site refused (the form keeps what was typed; test/e2e/floor-ui-forms.e2e.test.ts in chromium).
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { Role, SiteApi } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { createAppStore } from '../store/store.ts';
import { addConfirmed, UsersDone } from './Users.tsx';

function render(lang: 'en' | 'nb' | 'de', done: Parameters<typeof UsersDone>[0]['done']): string {
  const store = createAppStore({} as SiteApi);
  store.setState({ lang });
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(UsersDone, { done })));
}

describe('Users: a user added', () => {
  it('is confirmed with the name and the role in words, in en, nb and de', () => {
    const added = { key: 'users.added' as const, added: { name: 'Ola', role: 'shift_lead' as Role } };
    expect(render('en', added)).toBe('<p role="status" class="add-done">Added Ola (Shift lead).</p>');
    expect(render('nb', added)).toBe('<p role="status" class="add-done">Bruker Ola (Skiftleder) er lagt til.</p>');
    expect(render('de', added)).toBe('<p role="status" class="add-done">Benutzer Ola (Schichtleitung) angelegt.</p>');
    // A reset still says what it set, as before.
    expect(render('en', { key: 'users.pinSet', name: 'Per' })).toBe('<p role="status" class="reset-done">New PIN set for Per (it replaces their password, if they had one).</p>');
  });

  it('is confirmed only when the site added the user, with the name and role sent', async () => {
    const sent: unknown[] = [];
    const site = (ok: boolean) => async (...args: unknown[]) => (sent.push(args), ok);
    expect(await addConfirmed(site(true), 'Ola', 'operator', '0451', 'B-1')).toEqual({ name: 'Ola', role: 'operator' });
    expect(await addConfirmed(site(false), 'Ola/Per', 'admin', '0451', '')).toBeNull();
    expect(sent).toEqual([
      ['Ola', ['operator'], '0451', 'B-1'],
      ['Ola/Per', ['admin'], '0451', ''],
    ]);
  });
});
