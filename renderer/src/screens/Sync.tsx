import { useEffect } from 'react';
import { useApp, useT } from '../context.tsx';
import { syncProblems } from '../components/SyncChip.tsx';
import type { RestoredFromTagView } from '../../../core/site/api.ts';
import { formatBytes, formatDuration, formatNumber, formatTime, pluralKey, syncDroppedKey, syncReasonKey, syncRestoredKey, type Lang } from '../i18n/messages.ts';

/**
 * The tables `tilstand restore --fall-back-to-tag` took from an older tag, HQ's latest copy of them
 * damaged (the status's `restoredFromTag`, the site's to say for a week after the restore): what
 * each lost, from the tag's commit to the damaged copy's. Nothing when none (or an older site).
 */
function Restored({ lang, tables }: { lang: Lang; tables: RestoredFromTagView[] | undefined }) {
  const t = useT();
  if (!tables || tables.length === 0) return null;
  return (
    <section className="sync-restored">
      <h3>{t('sync.restored.title')}</h3>
      <ul>
        {tables.map((f) => (
          <li key={f.table}>
            {t(syncRestoredKey(f.table), {
              table: f.table,
              tag: f.tag,
              restored: formatTime(lang, f.restoredAtMs),
              from: formatTime(lang, f.committedMs),
              until: formatTime(lang, f.damagedCommittedMs),
              lost: formatDuration(lang, f.lostMs),
            })}
          </li>
        ))}
      </ul>
    </section>
  );
}

export function Sync() {
  const t = useT();
  const lang = useApp((s) => s.lang);
  const sync = useApp((s) => s.sync);
  // While the site does not answer (store `siteQuiet`): its line to HQ is not known, and the oldest step's wait grows by this page's clock.
  const quietForMs = useApp((s) => s.siteQuiet?.forMs ?? null);
  const load = useApp((s) => s.loadSync);
  // From the pushed status, not the sync view: said with no HQ target configured too.
  const restored = useApp((s) => s.status?.restoredFromTag);
  useEffect(() => void load(), [load]);
  if (!sync) return null;
  if (!sync.configured)
    return (
      <>
        <Restored lang={lang} tables={restored} />
        <p>{t('sync.notConfigured')}</p>
      </>
    );
  // Why it is not healthy: the view's own problems (the first is the sync_stalled alarm's reason),
  // so the reason and `healthy` come from the same answer.
  const reasonKey = syncReasonKey(syncProblems(sync)[0]);
  return (
    <section className="sync">
      <h2 className={sync.online && quietForMs === null ? '' : 'alert'}>{quietForMs !== null ? `⚠ ${t('nav.sync')}: ${t('sync.unknown')}` : sync.online ? `● ${t('sync.online')}` : `⚠ ${t('sync.offline')}`}</h2>
      {!sync.healthy && (
        <p className="alert sync-stalled">
          ⚠ {t('sync.unhealthy')}
          {reasonKey && ` — ${t(reasonKey, { window: formatDuration(lang, sync.windowMs) })}`}
        </p>
      )}
      <Restored lang={lang} tables={restored} />
      {sync.target && (
        <p>
          {t('sync.target')}: <code>{sync.target}</code>
        </p>
      )}
      <p>{t(pluralKey(lang, 'sync.pending', sync.pendingItems), { items: formatNumber(lang, sync.pendingItems), bytes: formatBytes(lang, sync.pendingBytes) })}</p>
      <p>
        {t(pluralKey(lang, 'sync.recent', sync.recentItems), { window: formatDuration(lang, sync.windowMs), items: formatNumber(lang, sync.recentItems), bytes: formatBytes(lang, sync.recentBytes) })}
      </p>
      <p>
        {t('sync.lastSuccess')}: {sync.lastSuccessMs ? formatTime(lang, sync.lastSuccessMs) : t('never')}
      </p>
      <p>
        {/* An age: how long the oldest unsent step has waited. */}
        {t('sync.oldest')}: {sync.oldestUnsyncedMs === null ? '–' : formatDuration(lang, sync.oldestUnsyncedMs + (quietForMs ?? 0))}
      </p>
      {sync.lastError && (
        <p className="sync-error">
          {t('sync.lastError')}: <code>{sync.lastError}</code>
        </p>
      )}
      {/* Tags dropped rather than sent (the last day): no health problem, but HQ will not have them. Absent from an older site: none. */}
      {sync.dropped && sync.dropped.length > 0 && (
        <section className="sync-dropped">
          <h3>{t('sync.dropped.title')}</h3>
          <ul>
            {sync.dropped.map((d, i) => (
              // A tag made again and dropped again is listed twice: the index keeps the keys apart.
              <li key={`${i}\u0000${d.table}\u0000${d.tag}`}>{t(syncDroppedKey(d.kind), { tag: d.tag, table: d.table, when: formatTime(lang, d.atMs), why: d.why })}</li>
            ))}
          </ul>
        </section>
      )}
      {sync.current && (
        <label>
          {t('sync.current', { file: sync.current.file })}
          <progress max={sync.current.total} value={sync.current.bytes} />
        </label>
      )}
    </section>
  );
}
