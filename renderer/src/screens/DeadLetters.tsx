import { useEffect } from 'react';
import { Table } from '../components/common.tsx';
import { useApp, useT } from '../context.tsx';
import { formatTime } from '../i18n/messages.ts';

export function DeadLetters() {
  const t = useT();
  const lang = useApp((s) => s.lang);
  const rows = useApp((s) => s.deadLetters);
  const result = useApp((s) => s.replayResult);
  const load = useApp((s) => s.loadDeadLetters);
  const replay = useApp((s) => s.replayDeadLetters);
  useEffect(() => void load(), [load]);
  return (
    <section>
      <button className="primary" onClick={() => void replay()} disabled={!rows.some((r) => r.status === 'open')}>
        {t('dead.replay')}
      </button>
      {result && <p role="status">{t('dead.replayed', { n: result.replayed, f: result.failed })}</p>}
      {rows.length === 0 ? (
        <p>{t('dead.empty')}</p>
      ) : (
        <Table label={t('nav.deadLetters')} head={[t('dead.received'), t('dead.reason'), t('dead.topic'), t('dead.payload')]}>
          {rows.map((r) => (
            <tr key={r.id} className={r.status === 'open' ? 'attention' : ''}>
              <td>{formatTime(lang, r.receivedMs)}</td>
              <td>
                <strong>{r.reason}</strong>
                <div className="small">{r.detail}</div>
              </td>
              <td className="mono">{r.topic}</td>
              <td className="mono payload">{r.payload}</td>
            </tr>
          ))}
        </Table>
      )}
    </section>
  );
}
