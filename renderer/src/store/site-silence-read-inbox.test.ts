// The events socket dead while the site's reads work (half-open, dropped by a proxy): `checkSite`
// reads the status itself and the "No word from the site" marker stays away. The socket's other
// events are gone with its statuses — a proposal made or decided, a commit — so the inbox stood
// still with nothing on the screen saying so (before the page read the status itself, the marker
// at least said the page was not live). What a push would have refreshed is read again with each
// of those status reads, as the socket's own resync does after a break.
import { describe, expect, it } from 'vitest';
import type { ProposalView, SiteApi, SiteStatus } from '../../../core/site/api.ts';
import { createAppStore, SITE_READ_EVERY_MS } from './store.ts';

const AT = Date.UTC(2026, 11, 6, 8, 0);
const status = (nowMs: number) => ({ siteId: 'osl1', nowMs, statusEveryMs: 5_000, alarms: [], tables: [], streams: [], sync: { configured: false } }) as unknown as SiteStatus;
const proposal = (id: string) => ({ id, status: 'open', risk: 'low', createdAtMs: AT }) as unknown as ProposalView;

describe('the site quiet on the events socket only: the inbox', () => {
  it('follows the site through the page’s own status reads (a new proposal shows, a decided one leaves)', async () => {
    const clock = { mono: 1_000, wall: AT };
    const site = { proposals: [proposal('p-1')], statusReads: 0, listReads: 0 };
    const api = {
      status: async () => {
        site.statusReads++;
        return status(clock.wall);
      },
      listProposals: async () => {
        site.listReads++;
        return [...site.proposals];
      },
    } as unknown as SiteApi;
    const store = createAppStore(api, undefined, { mono: () => clock.mono, wall: () => clock.wall });
    store.setState({ user: { name: 'Kari', roles: ['shift_lead'] }, lang: 'en' });
    const settle = () => new Promise((r) => setTimeout(r, 0));
    const pass = async (ms: number) => {
      for (let i = 0; i < ms / 1_000; i++) {
        clock.mono += 1_000;
        clock.wall += 1_000;
        store.getState().checkSite();
        await settle();
        await settle();
      }
    };
    store.getState().applyEvent({ type: 'status', status: status(AT) });
    await store.getState().loadProposals();
    expect(store.getState().proposals.map((p) => p.id)).toEqual(['p-1']);
    // The socket dies (no push from here on); the agent proposes, and p-1 is decided at another PC.
    site.proposals = [proposal('p-2')];
    await pass(30_000);
    expect(store.getState().siteQuiet).toBeNull();
    expect(store.getState().proposals.map((p) => p.id)).toEqual(['p-2']);
    // Bounded: the list is read with the page's status reads (one per 10 s of silence), no more.
    expect(site.listReads - 1).toBeLessThanOrEqual(site.statusReads);
    expect(site.statusReads).toBeLessThanOrEqual(30_000 / SITE_READ_EVERY_MS);
  });
});
