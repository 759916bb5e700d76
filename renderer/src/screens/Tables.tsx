import { Fragment, useEffect } from 'react';
import { BudgetGauge, Table } from '../components/common.tsx';
import { useApp, useT } from '../context.tsx';
import { selectShownStatus, selectShownTables } from '../store/store.ts';
import { formatBytes, formatDuration, formatNumber, tableDecision } from '../i18n/messages.ts';

/**
 * A table's or stream's name that may break after each '_', '/' or '-' (`<wbr>`), and nowhere
 * else: a name as long as the site allows (64 characters, letters, digits and '_') in one piece
 * widened the first column, and the table ran 1,331 px in its 990 px panel at 1024 wide, its
 * right-hand columns behind a sideways scroll (test/e2e/floor-ui-long-floor.e2e.test.ts).
 */
export function Name({ name }: { name: string }) {
  return (
    <>
      {name.split(/(?<=[_/-])/).map((part, i) => (
        <Fragment key={i}>
          {i > 0 && <wbr />}
          {part}
        </Fragment>
      ))}
    </>
  );
}

export function Tables() {
  const t = useT();
  const lang = useApp((s) => s.lang);
  // Aged by this page's clock while the site does not answer (selectShownTables): no age looks younger than it is.
  const tables = useApp(selectShownTables);
  const load = useApp((s) => s.loadTables);
  const status = useApp(selectShownStatus);
  const loadStatus = useApp((s) => s.loadStatus);
  useEffect(() => void load(), [load]);
  useEffect(() => void loadStatus(), [loadStatus]);
  const streams = status?.streams ?? [];
  return (
    <section>
      <Table label={t('nav.tables')} head={[t('tables.table'), t('tables.age'), t('tables.budget'), t('tables.freshness'), t('tables.pending'), t('tables.snapshots'), t('tables.tags'), t('tables.size'), t('tables.debt')]}>
        {tables.map((x) => (
          <tr key={x.table} className={x.withinBudget ? '' : 'attention'} data-table={x.table}>
            <td>
              <Name name={x.table} />
              {/* core's default decision in the chosen language; a site's own text as written. */}
              <div className="muted small" title={x.decision}>{tableDecision(lang, x.table, x.decision)}</div>
            </td>
            {/* A table no binding feeds is 0 ms old forever: a green gauge would read as current. */}
            <td className="num">{x.fed === false ? `⊘ ${t('tables.unfed')}` : formatDuration(lang, x.ageMs)}</td>
            <td className="num">{formatDuration(lang, x.budgetMs)}</td>
            <td>{x.fed === false ? <span className="muted small">{t('tables.unfedHint')}</span> : <BudgetGauge ageMs={x.ageMs} budgetMs={x.budgetMs} label={`${x.table} ${t('tables.age')}`} />}</td>
            <td className="num">{formatNumber(lang, x.pendingEvents)}</td>
            <td className="num">{formatNumber(lang, x.snapshots)}</td>
            <td className="num">{formatNumber(lang, x.tags)}</td>
            <td className="num">{formatBytes(lang, x.bytes)}</td>
            <td className="num">{formatNumber(lang, x.compactionDebt)}</td>
          </tr>
        ))}
      </Table>
      {/* A module that stopped publishing leaves its tables "within budget" (nothing is pending):
          each stream's last event shows it, and a stream silent past its allowance is marked. */}
      {streams.length > 0 && (
        <Table label={t('streams.title')} head={[t('streams.stream'), t('streams.lastEvent'), t('streams.seq'), t('streams.allowed')]}>
          {streams.map((x) => (
            <tr key={x.stream} className={x.silent ? 'attention' : ''} data-stream={x.stream}>
              <td>
                <Name name={x.stream} />
                {x.silent && <div className="small">{t('streams.silent')}</div>}
                {x.gap && <div className="small">{t('streams.gap', { from: formatNumber(lang, x.gap.from), to: formatNumber(lang, x.gap.to), d: formatDuration(lang, Math.max(0, status!.nowMs - x.gap.sinceMs)) })}</div>}
              </td>
              <td className="num">{x.lastEventMs === null ? t('streams.none') : t('streams.ago', { d: formatDuration(lang, Math.max(0, status!.nowMs - x.lastEventMs)) })}</td>
              <td className="num">{x.lastSeq === null ? '–' : formatNumber(lang, x.lastSeq)}</td>
              <td className="num">{x.silentAllowedMs === 0 ? t('streams.never') : formatDuration(lang, x.silentAllowedMs)}</td>
            </tr>
          ))}
        </Table>
      )}
    </section>
  );
}
