// The Electron bridge (`window.tilstand`, electron/preload.cjs: `ipcRenderer.invoke`): a call main
// never answered rejects with Electron's own English — "Error invoking remote method
// 'tilstand:call': reply was never sent" (main dropped the reply: its handler hung up, the window
// was being torn down) or "… No handler registered for 'tilstand:call'" (main not yet, or no
// longer, answering) — and the error line showed it as it was, in every language. It is said as
// the HTTP bridge says a call the site never answered (NO_ANSWER_MESSAGE), in the chosen language.
// A rejection that is not main's silence (the request could not be cloned: the page's own fault)
// keeps its text.
import { describe, expect, it } from 'vitest';
import type { SiteApi } from '../../../core/site/api.ts';
import { createAppStore, selectErrorLine } from '../store/store.ts';
import { createClient } from './client.ts';

const bridge = (message: string) => ({
  call: () => Promise.reject(new Error(message)),
  subscribe: () => () => undefined,
});

const want = {
  en: 'Something went wrong: the site did not answer (it may be restarting, or the network is down); try again in a moment',
  nb: 'Noe gikk galt: stedet svarte ikke (det starter kanskje på nytt, eller nettverket er nede); prøv igjen om litt',
  de: 'Etwas ist schiefgelaufen: der Standort hat nicht geantwortet (er startet vielleicht neu, oder das Netzwerk ist gestört); gleich noch einmal versuchen',
} as const;

describe('an IPC call main never answered', () => {
  for (const message of [
    "Error invoking remote method 'tilstand:call': reply was never sent",
    "Error invoking remote method 'tilstand:call': Error: No handler registered for 'tilstand:call'",
  ]) {
    it(`is said in the chosen language, not as Electron words it (${message.slice(message.indexOf(': ') + 2)})`, async () => {
      for (const lang of ['en', 'nb', 'de'] as const) {
        const store = createAppStore(createClient(() => null, bridge(message)) as unknown as SiteApi);
        store.setState({ user: { name: 'Kari', roles: ['shift_lead'] }, lang });
        await store.getState().loadStatus();
        expect(selectErrorLine(store.getState()), lang).toBe(want[lang]);
      }
    });
  }

  it('keeps the text of a rejection that is not main’s silence', async () => {
    const store = createAppStore(createClient(() => null, bridge('An object could not be cloned.')) as unknown as SiteApi);
    store.setState({ user: { name: 'Kari', roles: ['shift_lead'] }, lang: 'en' });
    await store.getState().loadStatus();
    expect(selectErrorLine(store.getState())).toContain('An object could not be cloned.');
  });
});
