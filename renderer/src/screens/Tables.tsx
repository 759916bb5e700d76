import { useEffect } from 'react';
import { BudgetGauge, Table } from '../components/common.tsx';
import { useApp, useT } from '../context.tsx';
import { formatBytes, formatDuration, formatNumber } from '../i18n/messages.ts';

export function Tables() {
  const t = useT();
  const lang = useApp((s) => s.lang);
  const tables = useApp((s) => s.tables);
  const load = useApp((s) => s.loadTables);
  useEffect(() => void load(), [load]);
  return (
    <section>
      <Table label={t('nav.tables')} head={[t('tables.table'), t('tables.age'), t('tables.budget'), '', t('tables.pending'), t('tables.snapshots'), t('tables.tags'), t('tables.size'), t('tables.debt')]}>
        {tables.map((x) => (
          <tr key={x.table} className={x.withinBudget ? '' : 'attention'} data-table={x.table}>
            <td>
              {x.table}
              <div className="muted small">{x.decision}</div>
            </td>
            <td className="num">{formatDuration(lang, x.ageMs)}</td>
            <td className="num">{formatDuration(lang, x.budgetMs)}</td>
            <td>
              <BudgetGauge ageMs={x.ageMs} budgetMs={x.budgetMs} label={`${x.table} ${t('tables.age')}`} />
            </td>
            <td className="num">{formatNumber(lang, x.pendingEvents)}</td>
            <td className="num">{formatNumber(lang, x.snapshots)}</td>
            <td className="num">{formatNumber(lang, x.tags)}</td>
            <td className="num">{formatBytes(lang, x.bytes)}</td>
            <td className="num">{formatNumber(lang, x.compactionDebt)}</td>
          </tr>
        ))}
      </Table>
    </section>
  );
}
