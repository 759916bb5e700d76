// A call made while the site stops is refused (core/site service.ts `stoppingError`: `conflict`,
// code `site.stopping`), and one cut short by the stop is answered that the site stopped before it
// finished (`site.stopped`). The floor UI showed the site's English text in every language; now it
// says it in the reader's language, as a refusal on the error line and the sign-in screen — never
// framed as "Something went wrong". Through the real client, store and screens (server-side markup).
import { describe, expect, it } from 'vitest';
import type { ApiErrorBody } from '../../../core/site/api.ts';
import { App } from '../App.tsx';
import { SignIn } from '../screens/SignIn.tsx';
import { refusalText } from './messages.ts';
import { errorLine, storeRefusing } from './refusal-testing.ts';

const STOPPING: ApiErrorBody = { kind: 'conflict', message: 'the site is stopping; try again once it has started again', code: 'site.stopping' };
const STOPPED: ApiErrorBody = { kind: 'conflict', message: 'the site stopped before this call finished; try again once it has started again', code: 'site.stopped' };

describe('a call refused because the site is stopping (site.stopping)', () => {
  it('is said in en, nb and de on the error line, as a refusal', async () => {
    const store = storeRefusing('stock', STOPPING, 'shift_lead');
    store.setState({ screen: 'stock' });
    await store.getState().loadStock();
    expect(errorLine(store, 'en', App)).toBe('The site is stopping: try again once it has started again');
    expect(errorLine(store, 'nb', App)).toBe('Stedet stopper: prøv igjen når det har startet igjen');
    expect(errorLine(store, 'de', App)).toBe('Der Standort wird gestoppt: erneut versuchen, sobald er wieder gestartet ist');
  });

  it('is said on the sign-in screen too', async () => {
    const store = storeRefusing('signIn', STOPPING);
    store.setState({ user: null });
    await store.getState().signIn('Ada', '2580');
    expect(errorLine(store, 'nb', SignIn)).toBe('Stedet stopper: prøv igjen når det har startet igjen');
    expect(errorLine(store, 'de', SignIn)).toBe('Der Standort wird gestoppt: erneut versuchen, sobald er wieder gestartet ist');
  });
});

describe('a call cut short by the stop (site.stopped)', () => {
  it('is said in en, nb and de, as a refusal', async () => {
    const store = storeRefusing('addUser', STOPPED);
    store.setState({ screen: 'users' });
    expect(await store.getState().addUser('Nils', ['operator'], '2580')).toBe(false);
    expect(errorLine(store, 'en', App)).toBe('The site stopped before it had finished this: once it has started again, check whether it was done, and if not, try again');
    expect(errorLine(store, 'nb', App)).toBe('Stedet stoppet før det var ferdig med dette: når det har startet igjen, sjekk om det ble gjort, og prøv igjen hvis ikke');
    expect(errorLine(store, 'de', App)).toBe('Der Standort wurde gestoppt, bevor er damit fertig war: sobald er wieder gestartet ist, prüfen, ob es ausgeführt wurde, und es sonst erneut versuchen');
  });

  it('is worded from the code alone: neither needs params', () => {
    for (const lang of ['en', 'nb', 'de'] as const) {
      expect(refusalText(lang, { message: STOPPING.message, code: 'site.stopping' })).not.toBe(STOPPING.message);
      expect(refusalText(lang, { message: STOPPED.message, code: 'site.stopped' })).not.toBe(STOPPED.message);
    }
  });
});
