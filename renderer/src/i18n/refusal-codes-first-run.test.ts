// The first run's refusals, the UI server's "sign in first" and its sign-in queue in the reader's
// language (core/site/api.ts RefusalCode `init.*`, `site.*`, `session.required`, `signin.busy`):
// worded in en, nb and de (not the site's message, which names the data directory's path), and
// the English message for a code without the params it needs. Through the real client, store and screens (server-side markup).
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

function storeRefusing(error: ApiErrorBody) {
  const bridge = {
    call: async (method: string): Promise<ApiResult<unknown>> => (method === 'initSite' || method === 'signIn' || method === 'status' ? { ok: false, error } : { ok: true, value: [] }),
    subscribe: () => () => {},
  };
  return createAppStore(createClient(() => null, bridge) as unknown as SiteApi);
}

function render(store: ReturnType<typeof storeRefusing>, lang: Lang, component: () => unknown): string {
  store.setState({ lang });
  store.getInitialState = store.getState;
  const html = renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(component as () => null)));
  const line = /<p role="alert" class="error"[^>]*>(.*?)<\/p>/.exec(html)?.[1] ?? '';
  return line.replace(/<[^>]+>/g, '').replace(/✖$/, '').replace(/&#x27;/g, "'");
}

const RESTORED: ApiErrorBody = {
  kind: 'invalid',
  message: "/var/lib/tilstand holds a restore of site 'south' (restore-note.json): initialize it with site id 'south', or use another directory for a new site",
  code: 'init.restoredOther',
  params: { site: 'south' },
};

describe('the first run in the reader’s language', () => {
  it('words a directory restored for another site on the first-run screen, in en too', async () => {
    const store = storeRefusing(RESTORED);
    store.setState({ firstRun: { initialized: false, siteId: null, restoredSite: null } });
    await store.getState().initSite('north', 'Ada', '5820');
    expect(render(store, 'nb', FirstRun)).toBe('Denne PC-en har en gjenoppretting av stedet south: sett den opp med steds-id south');
    expect(render(store, 'de', FirstRun)).toBe('Dieser PC enthält eine Wiederherstellung des Standorts south: mit der Standort-ID south einrichten');
    expect(render(store, 'en', FirstRun)).toBe('This PC holds a restore of site south: set it up with site id south');
  });

  it('words the other first-run refusals, and falls back to English without their params', () => {
    const otherSite = { message: 'x holds the tables', code: 'init.otherSite', params: { sites: 'south,east' } };
    expect(refusalText('nb', otherSite)).toBe('Denne PC-en har allerede tabellene til stedet south, east: sett den opp med den steds-id-en, eller be IT om en annen datamappe');
    expect(refusalText('de', { message: 'y', code: 'init.exists' })).toBe('Das Datenverzeichnis dieses PCs ist bereits eingerichtet: die Seite neu laden, um sich anzumelden');
    expect(refusalText('nb', { message: 'z', code: 'init.restoreNote' })).toBe('Gjenopprettingsnotatet på denne PC-en (restore-note.json) kan ikke leses: si fra til IT');
    expect(refusalText('de', { message: 'u', code: 'init.restoreUnfinished' })).toBe('Die Wiederherstellung auf diesen PC wurde nicht abgeschlossen: die IT bitten, sie erneut auszuführen');
    expect(refusalText('de', { message: 'not set up', code: 'site.notSetUp' })).toMatch(/^Dieser Standort ist noch nicht eingerichtet/);
    expect(refusalText('nb', { message: 'set up', code: 'site.alreadySetUp' })).toMatch(/^Dette stedet er allerede satt opp/);
    // Run again under another admin name after a setup that stopped once it had added its admin.
    const adminExists = { message: "an earlier init of x that did not finish added the admin 'kari'", code: 'init.adminExists', params: { admin: 'kari' } };
    expect(refusalText('en', adminExists)).toBe('Setting up this PC stopped after it had added the administrator kari: set it up again with that administrator name (the PIN given now is taken)');
    expect(refusalText('nb', adminExists)).toBe('Oppsettet av denne PC-en stoppet etter at administratoren kari var lagt til: sett den opp på nytt med det administratornavnet (PIN-en som gis nå, blir brukt)');
    expect(refusalText('de', adminExists)).toBe('Die Einrichtung dieses PCs brach ab, nachdem der Administrator kari angelegt war: erneut mit diesem Administratornamen einrichten (die jetzt eingegebene PIN gilt)');
    expect(refusalText('nb', { ...adminExists, params: {} })).toBe(adminExists.message);
    expect(refusalText('nb', { message: 'english restored', code: 'init.restoredOther' })).toBe('english restored');
    expect(refusalText('de', { message: 'english sites', code: 'init.otherSite', params: { sites: 3 } })).toBe('english sites');
  });
});

describe('the session and the sign-in queue in the reader’s language', () => {
  it("says on the sign-in screen, worded, that the session ended ('sign in first'), and a full sign-in queue", async () => {
    const ended = storeRefusing({ kind: 'unauthenticated', message: 'sign in first', code: 'session.required' });
    ended.setState({ firstRun: { initialized: true, siteId: 'demo', restoredSite: null }, user: { name: 'Ada', roles: ['admin'] } });
    await ended.getState().loadStatus();
    expect(ended.getState().user).toBeNull();
    // Signed out by the site: App shows the sign-in screen, which says why.
    expect(render(ended, 'nb', App)).toBe('Ikke pålogget (økten er avsluttet, eller stedet startet på nytt): logg inn');
    expect(render(ended, 'en', App)).toBe('Not signed in (the session ended, or the site restarted): sign in');
    // A reason the site sends without a code (a user disabled meanwhile) as it came.
    const disabled = storeRefusing({ kind: 'unauthenticated', message: 'user Ada can no longer sign in (disabled); sign in again' });
    disabled.setState({ firstRun: { initialized: true, siteId: 'demo', restoredSite: null }, user: { name: 'Ada', roles: ['admin'] } });
    await disabled.getState().loadStatus();
    expect(render(disabled, 'de', App)).toBe('user Ada can no longer sign in (disabled); sign in again');
    const busy = storeRefusing({ kind: 'unauthenticated', message: 'sign-in refused: too many sign-ins from here at once; try again in a moment', code: 'signin.busy' });
    busy.setState({ firstRun: { initialized: true, siteId: 'demo', restoredSite: null } });
    await busy.getState().signIn('Ada', '5820');
    expect(render(busy, 'de', SignIn)).toBe('Zu viele Anmeldungen von diesem PC gleichzeitig; gleich noch einmal versuchen');
  });
});
