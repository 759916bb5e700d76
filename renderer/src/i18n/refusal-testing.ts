// Test support for the refusal-code tests (refusal-codes-*.test.ts): a store over the real client
// whose site refuses one method, and the error line a screen shows for it, as text. Not imported
// by the app.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { expect } from 'vitest';
import type { ApiErrorBody, ApiResult, Role, SiteApi } from '../../../core/site/api.ts';
import { createClient } from '../api/client.ts';
import { StoreContext } from '../context.tsx';
import { createAppStore } from '../store/store.ts';
import type { Lang } from './messages.ts';

/** A store signed in as Ada (`role`) whose site refuses `method` with `error`, else answers empty. */
export function storeRefusing(method: string, error: ApiErrorBody, role: Role = 'admin') {
  const bridge = {
    call: async (m: string): Promise<ApiResult<unknown>> => (m === method ? { ok: false, error } : { ok: true, value: [] }),
    subscribe: () => () => {},
  };
  const store = createAppStore(createClient(() => null, bridge) as unknown as SiteApi);
  store.setState({ firstRun: { initialized: true } as never, user: { name: 'Ada', roles: [role] } });
  return store;
}

export type RefusingStore = ReturnType<typeof storeRefusing>;

/** The error line `component` shows in `lang`, as text (server-side markup of the real screen). */
export function errorLine(store: RefusingStore, lang: Lang, component: () => unknown): string {
  store.setState({ lang });
  // Server-side markup reads the store's initial state (useSyncExternalStore): the current one here.
  store.getInitialState = store.getState;
  const html = renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(component as () => null)));
  const line = /<p role="alert" class="error"[^>]*>(.*?)<\/p>/.exec(html)?.[1];
  expect(line, 'the error line').toBeDefined();
  return line!.replace(/<[^>]+>/g, '').replace(/✖$/, '').replace(/&#x27;/g, "'").replace(/&quot;/g, '"').replace(/&gt;/g, '>').replace(/&lt;/g, '<').replace(/&amp;/g, '&');
}
