import { useEffect } from 'react';
import { useApp, useT } from '../context.tsx';
import { formatBytes, formatDuration, formatNumber, formatTime, syncReasonKey } from '../i18n/messages.ts';

export function Sync() {
  const t = useT();
  const lang = useApp((s) => s.lang);
  const sync = useApp((s) => s.sync);
  const load = useApp((s) => s.loadSync);
  // Why it is not healthy, as the site classified it for its sync_stalled alarm (the status's
  // alarms): the sync status itself carries only the last error.
  const reason = useApp((s) => s.status?.alarms.find((a) => a.kind === 'sync_stalled')?.params?.reason);
  useEffect(() => void load(), [load]);
  if (!sync) return null;
  if (!sync.configured) return <p>{t('sync.notConfigured')}</p>;
  const reasonKey = syncReasonKey(reason);
  return (
    <section className="sync">
      <h2 className={sync.online ? '' : 'alert'}>{sync.online ? `● ${t('sync.online')}` : `⚠ ${t('sync.offline')}`}</h2>
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
      <p>{t('sync.pending', { items: formatNumber(lang, sync.pendingItems), bytes: formatBytes(lang, sync.pendingBytes) })}</p>
      <p>
        {t('sync.recent', { window: formatDuration(lang, sync.windowMs), items: formatNumber(lang, sync.recentItems), bytes: formatBytes(lang, sync.recentBytes) })}
      </p>
      <p>
        {t('sync.lastSuccess')}: {sync.lastSuccessMs ? formatTime(lang, sync.lastSuccessMs) : t('never')}
      </p>
      <p>
        {/* An age: how long the oldest unsent step has waited. */}
        {t('sync.oldest')}: {sync.oldestUnsyncedMs === null ? '–' : formatDuration(lang, sync.oldestUnsyncedMs)}
      </p>
      {sync.lastError && (
        <p className="sync-error">
          {t('sync.lastError')}: <code>{sync.lastError}</code>
        </p>
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
