import type { SyncStatus } from '../../../core/site/api.ts';
import { useApp, useT } from '../context.tsx';

/**
 * Why sync is not healthy, most pressing first, as the site's sync view says it (core/site
 * syncView `problems`: 'refused', 'credentials', 'gone', 'step', 'waiting', 'planning', or one of a newer site); empty
 * when healthy or from an older site, which sends none.
 */
export function syncProblems(sync: SyncStatus | null | undefined): readonly string[] {
  return sync?.problems ?? [];
}

/**
 * The header's sync chip. A refusal comes first: HQ answers (the line is "online") and takes
 * nothing, and waiting for the line mends nothing. Then offline (it explains a stall). Online and
 * not healthy otherwise (a step or a table failing, or no reason known) says so: "Online" beside
 * the sync_stalled alarm read as all well. The Sync screen says why.
 */
export function SyncChip() {
  const t = useT();
  const sync = useApp((s) => s.status?.sync);
  // The site does not answer (store `siteQuiet`): what it said of the line to HQ is old news.
  const quiet = useApp((s) => s.siteQuiet !== null);
  let text = `${t('nav.sync')}: –`;
  let alert = false;
  if (sync?.configured && quiet) {
    text = `⚠ ${t('nav.sync')}: ${t('sync.unknown')}`;
    alert = true;
  } else if (sync?.configured) {
    alert = true;
    // HQ refusing this PC or its access key: the line is up, and waiting mends neither.
    if (syncProblems(sync).some((p) => p === 'refused' || p === 'credentials')) text = `⚠ ${t('sync.refused')}`;
    // HQ's folder no longer holds what this PC sent (a share not mounted): the line may be up.
    else if (syncProblems(sync).includes('gone')) text = `⚠ ${t('sync.gone')}`;
    else if (!sync.online) text = `⚠ ${t('sync.offline')}`;
    else if (!sync.healthy) text = `⚠ ${t('nav.sync')}: ${t('sync.unhealthy')}`;
    else {
      text = t('sync.online');
      alert = false;
    }
  }
  return (
    <span className={`chip ${alert ? 'chip-alert' : ''}`} data-testid="sync-chip">
      {text}
    </span>
  );
}
