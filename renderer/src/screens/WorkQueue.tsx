import { useEffect } from 'react';
import { Table } from '../components/common.tsx';
import { useApp, useT } from '../context.tsx';

const STATUS_ORDER = ['blocked', 'released', 'in_progress', 'done'];

export function WorkQueue() {
  const t = useT();
  const jobs = useApp((s) => s.jobs);
  const resources = useApp((s) => s.resources);
  const load = useApp((s) => s.loadWork);
  useEffect(() => void load(), [load]);
  const sorted = [...jobs].sort((a, b) => STATUS_ORDER.indexOf(a.status) - STATUS_ORDER.indexOf(b.status) || (b.priority ?? 0) - (a.priority ?? 0));
  return (
    <div className="work">
      <section>
        <h2>{t('work.jobs')}</h2>
        <Table label={t('work.jobs')} head={[t('work.job'), t('work.status'), t('work.blocked'), t('work.capability'), t('work.priority'), t('work.due'), t('work.assigned')]}>
          {sorted.map((j) => (
            <tr key={j.job_id} className={j.status === 'blocked' ? 'attention' : ''} data-job={j.job_id}>
              <td>{j.job_id}</td>
              <td>{j.status === 'blocked' ? `⛔ ${j.status}` : j.status}</td>
              <td>{j.blocked_reason ?? ''}</td>
              <td>{j.capability ?? ''}</td>
              <td>{j.priority ?? ''}</td>
              <td>{j.due_at ?? ''}</td>
              <td className="assigned">{j.assigned_resource ?? ''}</td>
            </tr>
          ))}
        </Table>
      </section>
      <section>
        <h2>{t('work.resources')}</h2>
        <Table label={t('work.resources')} head={[t('work.resource'), t('work.capability'), t('work.state'), t('work.since')]}>
          {resources.map((r) => (
            <tr key={r.resource_id} className={r.state === 'down' ? 'attention' : ''}>
              <td>{r.resource_id}</td>
              <td>{r.capability ?? ''}</td>
              <td>{r.state === 'down' ? `⚠ ${r.state}` : r.state}</td>
              <td>{r.since ?? ''}</td>
            </tr>
          ))}
        </Table>
      </section>
    </div>
  );
}
