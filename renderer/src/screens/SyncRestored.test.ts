// A table `tilstand restore --fall-back-to-tag` rolled back to an older tag (HQ's latest copy of it
// damaged) has lost what it recorded after the tag; the site's status carries it for a week after
// the restore (core/site status.ts `restoredFromTag`). The Sync screen says so in the floor's
// words, in each language: which table, from which tag, since when, what is lost and why, and for
// the inbox's tables that nothing resends it. Before, only the restore's own output said so.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import type { RestoredFromTagView, SiteApi, SiteStatus, SyncStatus } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { createAppStore } from '../store/store.ts';
import { inTimeZone } from '../testing/time-zone.ts';
import { Sync } from './Sync.tsx';

inTimeZone('Europe/Oslo');

const TAG_AT = Date.UTC(2026, 11, 5, 9, 0, 0);
const DAMAGED_AT = Date.UTC(2026, 11, 5, 11, 13, 0);
const RESTORED_AT = Date.UTC(2026, 11, 6, 7, 30, 5);

const stock: RestoredFromTagView = {
  table: 'stock',
  tag: 'hourly-2026120509',
  snapshotId: 30,
  committedMs: TAG_AT,
  damagedSnapshotId: 41,
  damagedCommittedMs: DAMAGED_AT,
  lostMs: DAMAGED_AT - TAG_AT,
  error: 'snapshot 41 names bucket-0/data-1.parquet, which HQ does not hold',
  restoredAtMs: RESTORED_AT,
};
const inbox: RestoredFromTagView = { ...stock, table: 'approval_inbox', tag: 'agent-run-7' };

const sync: SyncStatus = {
  configured: true,
  target: '/mnt/hq',
  online: true,
  pendingItems: 0,
  pendingBytes: 0,
  oldestUnsyncedMs: null,
  lastSuccessMs: Date.UTC(2026, 11, 6, 9, 40),
  current: null,
  recentItems: 3,
  recentBytes: 4_000,
  windowMs: 15 * 60_000,
  healthy: true,
  problems: [],
  lastError: null,
};

function render(lang: 'en' | 'nb' | 'de', restoredFromTag: RestoredFromTagView[] | undefined, s: SyncStatus = sync): string {
  const store = createAppStore({} as SiteApi);
  store.setState({ sync: s, lang, status: { alarms: [], ...(restoredFromTag ? { restoredFromTag } : {}) } as unknown as SiteStatus });
  // Server rendering reads the store's server snapshot, which is its initial state.
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(Sync)));
}

describe('Sync screen: a table restored from an older tag', () => {
  it('en: the table, the tag, when, what is lost and why; the inbox’s own sentence', () => {
    const html = render('en', [stock, inbox]);
    expect(html).toContain('Restored from an older tag');
    expect(html).toContain(
      'Table stock was restored on 06/12/2026, 08:30:05 from its tag hourly-2026120509, because its latest copy at headquarters was damaged. What it recorded from 05/12/2026, 10:00:00 to 05/12/2026, 12:13:00 (2 hrs 13 mins) is lost, except what its modules sent again.',
    );
    expect(html).toContain('The proposals, decisions and command progress from 05/12/2026, 10:00:00 to 05/12/2026, 12:13:00 (2 hrs 13 mins) are lost and were not sent again');
    // Not a health problem of the line: sync stays healthy.
    expect(html).not.toContain('NOT HEALTHY');
  });

  it('nb', () => {
    const html = render('nb', [stock]);
    expect(html).toContain('Gjenopprettet fra et eldre merke');
    expect(html).toContain(
      'Tabellen stock ble gjenopprettet 06.12.2026, 08:30:05 fra merket hourly-2026120509, fordi den nyeste kopien på hovedkontoret var skadet. Det den registrerte fra 05.12.2026, 10:00:00 til 05.12.2026, 12:13:00 (2 t 13 min), er tapt, bortsett fra det modulene sendte på nytt.',
    );
  });

  it('de', () => {
    const html = render('de', [stock]);
    expect(html).toContain('Aus einem älteren Tag wiederhergestellt');
    expect(html).toContain(
      'Die Tabelle stock wurde am 06.12.2026, 08:30:05 aus ihrem Tag hourly-2026120509 wiederhergestellt, weil ihre neueste Kopie in der Zentrale beschädigt war. Was sie von 05.12.2026, 10:00:00 bis 05.12.2026, 12:13:00 (2 Std. 13 Min.) erfasst hat, ist verloren, außer dem, was ihre Module erneut gesendet haben.',
    );
  });

  it('said on a site with no HQ target configured too', () => {
    const html = render('en', [stock], { ...sync, configured: false, target: null });
    expect(html).toContain('Restored from an older tag');
    expect(html).toContain('Table stock was restored on 06/12/2026, 08:30:05 from its tag hourly-2026120509');
  });

  it('none (past the week, never restored so), or an older site without the field: nothing said', () => {
    for (const r of [[], undefined]) {
      const html = render('en', r);
      expect(html).not.toContain('Restored from an older tag');
      expect(html).not.toContain('sync-restored');
    }
  });
});
