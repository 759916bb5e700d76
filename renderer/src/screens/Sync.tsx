import { useEffect } from 'react';
import { useApp, useT } from '../context.tsx';
import { syncProblems } from '../components/SyncChip.tsx';
import { formatBytes, formatDuration, formatNumber, formatTime, pluralKey, syncDroppedKey, syncReasonKey } from '../i18n/messages.ts';

export function Sync() {
  const t = useT();
  const lang = useApp((s) => s.lang);
  const sync = useApp((s) => s.sync);
  // While the site does not answer (store `siteQuiet`): its line to HQ is not known, and the oldest step's wait grows by this page's clock.
  const quietForMs = useApp((s) => s.siteQuiet?.forMs ?? null);
  const load = useApp((s) => s.loadSync);
  useEffect(() => void load(), [load]);
  if (!sync) return null;
  if (!sync.configured) return <p>{t('sync.notConfigured')}</p>;
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
