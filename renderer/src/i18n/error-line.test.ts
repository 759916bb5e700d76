// The error line (and the sign-in and first-run screens' errors): a refusal — the site answered
// that what was asked is not allowed or not possible (a 4xx with its message) — reads as itself,
// in the reader's language where the site gave a code; "Something went wrong" is kept for a
// failure of the system: an internal error (5xx, with the id of its line in logs/site.log) and a
// call the site never answered (the network). Through the real client, store and screens
// (server-side markup), the site answering as its transports do.
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
import type { Lang } from './messages.ts';

/** A store whose site answers `stock`, `signIn` and `initSite` with `answer` (a refusal, an internal error, or a network failure). */
function storeAnswering(answer: ApiErrorBody | 'network') {
  const bridge = {
    call: async (method: string): Promise<ApiResult<unknown>> => {
      if (method !== 'stock' && method !== 'signIn' && method !== 'initSite') return { ok: true, value: [] };
      if (answer === 'network') throw new TypeError('Failed to fetch');
      return { ok: false, error: answer };
    },
    subscribe: () => () => {},
  };
  const store = createAppStore(createClient(() => null, bridge) as unknown as SiteApi);
  store.setState({ firstRun: { initialized: true, siteId: 'demo', restoredSite: null } });
  return store;
}

function render(store: ReturnType<typeof storeAnswering>, lang: Lang, component: () => unknown = App): string {
  store.setState({ lang });
  // Server-side markup reads the store's initial state (useSyncExternalStore): the current one here.
  store.getInitialState = store.getState;
  const html = renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(component as () => null)));
  const m = /<p role="alert" class="error"[^>]*>(.*?)<\/p>/.exec(html);
  expect(m, 'the error line').not.toBeNull();
  return m![1]!.replace(/<[^>]+>/g, '').replace(/✖$/, '');
}

const ROLE: ApiErrorBody = { kind: 'forbidden', message: 'Olav is operator; only a shift lead or an admin sets reorder points', code: 'role.refused', params: { user: 'Olav', role: 'operator', allowed: 'shift_lead,admin' } };
const INTERNAL: ApiErrorBody = { kind: 'internal', message: "internal error (id 3f9a0c1e); the site's log (logs/site.log) has the details under that id" };

describe('the error line', () => {
  it('shows a refusal the site coded as itself, in each language, not as "something went wrong"', async () => {
    const store = storeAnswering(ROLE);
    store.setState({ user: { name: 'Olav', roles: ['operator'] }, screen: 'stock' });
    await store.getState().loadStock('', false);
    expect(render(store, 'nb')).toBe('Olav er operatør; dette krever skiftleder eller administrator');
    expect(render(store, 'de')).toBe('Olav ist Bediener; dafür braucht es Schichtleitung oder Administrator');
    expect(render(store, 'en')).toBe('Olav is Operator; this takes Shift lead or Admin');
  });

  it('shows a refusal without a code as the site said it', async () => {
    const store = storeAnswering({ kind: 'invalid', message: 'agent.reorder.items.A1: orderUpTo must be above reorderPoint' });
    store.setState({ user: { name: 'Ada', roles: ['admin'] }, screen: 'stock' });
    await store.getState().loadStock('', false);
    expect(render(store, 'nb')).toBe('agent.reorder.items.A1: orderUpTo must be above reorderPoint');
  });

  it('says that something went wrong, with the id, for an internal error', async () => {
    const store = storeAnswering(INTERNAL);
    store.setState({ user: { name: 'Ada', roles: ['admin'] }, screen: 'stock' });
    await store.getState().loadStock('', false);
    expect(render(store, 'en')).toBe('Something went wrong on the site (error 3f9a0c1e): if it happens again, tell IT; the site’s log has the details under that id.');
    expect(render(store, 'nb')).toBe('Noe gikk galt på stedet (feil 3f9a0c1e): skjer det igjen, si fra til IT; stedets logg har detaljene under denne id-en.');
    expect(render(store, 'de')).toContain('Am Standort ist etwas schiefgelaufen (Fehler 3f9a0c1e)');
    // An internal answer that is no site's text (a proxy's HTTP 502, client.ts) is framed with its text.
    const proxy = storeAnswering({ kind: 'internal', message: 'HTTP 502' });
    proxy.setState({ user: { name: 'Ada', roles: ['admin'] }, screen: 'stock' });
    await proxy.getState().loadStock('', false);
    expect(render(proxy, 'nb')).toBe('Noe gikk galt: HTTP 502');
  });

  it('says that something went wrong when the site never answered', async () => {
    const store = storeAnswering('network');
    store.setState({ user: { name: 'Ada', roles: ['admin'] }, screen: 'stock' });
    await store.getState().loadStock('', false);
    expect(render(store, 'de')).toBe('Etwas ist schiefgelaufen: Failed to fetch');
  });
});

describe('the sign-in and first-run screens', () => {
  it('show a refusal as itself and a failure framed', async () => {
    const refused = storeAnswering({ kind: 'unauthenticated', message: 'sign-in refused: wrong name, PIN or password', code: 'signin.wrong' });
    await refused.getState().signIn('Per', '9182');
    expect(render(refused, 'nb', SignIn)).toBe('Feil navn, PIN eller passord');
    const down = storeAnswering('network');
    await down.getState().signIn('Per', '9182');
    expect(render(down, 'nb', SignIn)).toBe('Noe gikk galt: Failed to fetch');
    const failed = storeAnswering(INTERNAL);
    failed.setState({ firstRun: { initialized: false, siteId: null, restoredSite: null } });
    await failed.getState().initSite('osl1', 'Ada', '5820');
    expect(render(failed, 'en', FirstRun)).toContain('Something went wrong on the site (error 3f9a0c1e)');
  });
});
