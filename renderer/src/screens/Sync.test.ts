// The Sync screen rendered from the store's state (server-side markup, no browser): an age is
// shown as a duration, a stalled sync and its last error are visible, and an unconfigured site
// says where the target is set.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { SiteApi, SyncStatus } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { createAppStore } from '../store/store.ts';
import { Sync } from './Sync.tsx';

function render(sync: SyncStatus, lang: 'en' | 'nb' | 'de' = 'en'): string {
  const store = createAppStore({} as SiteApi);
  store.setState({ sync, lang });
  // Server rendering reads the store's server snapshot, which is its initial state.
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(Sync)));
}

const base: SyncStatus = {
  configured: true,
  target: 's3://hq-bucket/sites?endpoint=https://minio.hq.example:9000',
  online: true,
  pendingItems: 0,
  pendingBytes: 0,
  oldestUnsyncedMs: null,
  lastSuccessMs: Date.UTC(2026, 11, 1, 9, 30),
  current: null,
  recentItems: 290,
  recentBytes: 204_595,
  windowMs: 15 * 60_000,
  healthy: true,
  lastError: null,
};

describe('Sync screen', () => {
  it('shows how long the oldest unsent step has waited, as a duration', () => {
    const html = render({ ...base, online: false, pendingItems: 19, pendingBytes: 14_360, oldestUnsyncedMs: 20 * 60_000 });
    expect(html).toContain('Oldest unsent step has waited: 20 min');
    // Not the age read as a point in time (1 January 1970).
    expect(html).not.toMatch(/1970|01\/01\/70|1\/1\/70/);
    expect(render({ ...base, oldestUnsyncedMs: 90_000 }, 'de')).toContain('Ältester ungesendeter Schritt wartet seit: 1 Min.');
  });

  it('shows a stalled sync and the last error', () => {
    const html = render({ ...base, online: false, pendingItems: 3, oldestUnsyncedMs: 16 * 60_000, healthy: false, lastError: 'Transport: connect ECONNREFUSED 10.0.0.9:443' });
    expect(html).toContain('NOT HEALTHY');
    expect(html).toContain('Last error: <code>Transport: connect ECONNREFUSED 10.0.0.9:443</code>');
    const ok = render(base);
    expect(ok).not.toContain('NOT HEALTHY');
    expect(ok).not.toContain('Last error');
    expect(ok).toContain('Oldest unsent step has waited: –');
  });

  it('says where it syncs to and what it sent within the health window, in each language', () => {
    const html = render(base);
    expect(html).toContain('0 bytes pending'); // not "0 byte"
    expect(html).toContain('Syncing to: <code>s3://hq-bucket/sites?endpoint=https://minio.hq.example:9000</code>');
    expect(html).toContain('In the last 15 mins: 290 steps done, 204.6 kB sent');
    expect(render(base, 'nb')).toContain('Siste 15 min: 290 steg utført, 204,6 kB sendt');
    expect(render(base, 'de')).toContain('In den letzten 15 Min.: 290 Schritte erledigt, 204,6 kB gesendet');
  });

  it('tells an unconfigured site where the target is set', () => {
    const html = render({ ...base, configured: false });
    expect(html).toContain('hq.target');
    expect(html).toContain('Connecting to headquarters');
  });
});
