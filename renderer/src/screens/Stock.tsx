import { useEffect, useState } from 'react';
import { Table } from '../components/common.tsx';
import { Waiting } from '../components/Waiting.tsx';
import { useApp, useT } from '../context.tsx';
import { formatNumber } from '../i18n/messages.ts';

export function Stock() {
  const t = useT();
  const lang = useApp((s) => s.lang);
  const stock = useApp((s) => s.stock);
  const load = useApp((s) => s.loadStock);
  const [q, setQ] = useState(useApp((s) => s.stockSearch));
  const [below, setBelow] = useState(useApp((s) => s.stockBelow));
  useEffect(() => {
    const h = setTimeout(() => void load(q, below), 250);
    return () => clearTimeout(h);
  }, [q, below, load]);
  return (
    <section>
      <label className="search">
        {t('stock.search')}
        <input name="search" type="search" value={q} onChange={(e) => setQ(e.target.value)} />
      </label>
      <label className="filter">
        <input name="below" type="checkbox" checked={below} onChange={(e) => setBelow(e.target.checked)} /> {t('stock.belowOnly')}
      </label>
      <Table
        label={t('nav.stock')}
        head={[t('stock.item'), t('stock.location'), t('stock.onHand'), t('stock.reserved'), t('stock.inbound'), t('stock.available'), t('stock.projected'), t('stock.reorderPoint'), t('work.waiting')]}
      >
        {stock.map((r) => (
          <tr key={`${r.item}|${r.location}`} className={(r.available ?? 0) < 0 || r.below_reorder_point ? 'attention' : ''}>
            <td>{r.item}</td>
            <td>{r.location}</td>
            <td className="num">{formatNumber(lang, r.on_hand)}</td>
            <td className="num">{formatNumber(lang, r.reserved)}</td>
            <td className="num">{formatNumber(lang, r.inbound)}</td>
            <td className="num">{formatNumber(lang, r.available)}</td>
            <td className="num">{formatNumber(lang, r.projected)}</td>
            <td className="num" title={t('stock.orderUpTo', { n: formatNumber(lang, r.order_up_to) })}>
              {r.below_reorder_point ? <span className="chip-alert below-tag">{t('stock.below')} </span> : null}
              {formatNumber(lang, r.reorder_point)}
            </td>
            <td className="waiting-cell">
              <Waiting items={r.waiting} />
            </td>
          </tr>
        ))}
      </Table>
    </section>
  );
}
