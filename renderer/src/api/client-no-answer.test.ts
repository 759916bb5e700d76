// A call the site never answered (the site restarting or stopped, the network down): chromium's
// fetch rejects with its own English, and the error line read "Noe gikk galt: Failed to fetch" in
// Norwegian, "Etwas ist schiefgelaufen: Failed to fetch" in German — nothing a shift lead can act
// on, in no language of the floor. It is said in the chosen language, as a failure of the system.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { SiteApi } from '../../../core/site/api.ts';
import { createAppStore, selectErrorLine } from '../store/store.ts';
import { createClient } from './client.ts';

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('a call the site never answers', () => {
  it('is said in the chosen language on the error line, not as the browser words it', async () => {
    vi.stubGlobal('window', {}); // a browser's page: no Electron bridge, the HTTP transport
    vi.stubGlobal('fetch', async () => {
      throw new TypeError('Failed to fetch');
    });
    const want = {
      en: 'Something went wrong: the site did not answer (it may be restarting, or the network is down); try again in a moment',
      nb: 'Noe gikk galt: stedet svarte ikke (det starter kanskje på nytt, eller nettverket er nede); prøv igjen om litt',
      de: 'Etwas ist schiefgelaufen: der Standort hat nicht geantwortet (er startet vielleicht neu, oder das Netzwerk ist gestört); gleich noch einmal versuchen',
    } as const;
    for (const lang of ['en', 'nb', 'de'] as const) {
      const api = createClient(() => null, undefined) as unknown as SiteApi;
      const store = createAppStore(api);
      store.setState({ user: { name: 'Kari', roles: ['shift_lead'] }, lang });
      await store.getState().loadStatus();
      expect(selectErrorLine(store.getState()), lang).toBe(want[lang]);
    }
  });
});
