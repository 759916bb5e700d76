import { useRef, useState, type FormEvent } from 'react';
import type { ConfigChangeView, StockView } from '../../../core/site/api.ts';
import { escapeCloses, focusAfterClose, Table } from '../components/common.tsx';
import { Waiting } from '../components/Waiting.tsx';
import { useApp, useT } from '../context.tsx';
import { formatNumber, formatTime } from '../i18n/messages.ts';
import { useSearchLoad } from '../search-load.ts';
import { selectIsDecider, STOCK_ROWS } from '../store/store.ts';

const COLUMNS = 9;

/** "Set by <name>, <time>" of a row's reorder point set from this screen; null when nobody did. */
function setByText(t: ReturnType<typeof useT>, lang: Parameters<typeof formatTime>[0], row: StockView): string | null {
  return row.reorder_set ? t('stock.setBy', { name: row.reorder_set.by, time: formatTime(lang, row.reorder_set.atMs) }) : null;
}

/** Whether the site takes these levels: order up to above the reorder point (an empty field the form's `required` catches). */
export function levelsOk(point: string, upTo: string): boolean {
  return point === '' || upTo === '' || Number(upTo) > Number(point);
}

/**
 * A shift lead's change of one row's reorder policy: for this location only, or for every
 * location of the item without one of its own; saved (or removed) through the site API, which
 * writes config.json under the signed-in name.
 */
function PolicyForm({ row, onDone }: { row: StockView; onDone: () => void }) {
  const t = useT();
  const lang = useApp((s) => s.lang);
  const save = useApp((s) => s.setReorderPolicy);
  const [scope, setScope] = useState<'location' | 'item'>(row.reorder_scope === 'item' ? 'item' : 'location');
  const [point, setPoint] = useState(String(row.reorder_point));
  const [upTo, setUpTo] = useState(String(row.order_up_to));
  // Each scope starts from the levels it has: the item's own when it has them, else the row's.
  const choose = (next: 'location' | 'item') => {
    setScope(next);
    const from = next === 'item' && row.item_policy ? row.item_policy : next === 'location' && row.reorder_scope === 'location' ? row : null;
    if (from) {
      setPoint(String(from.reorder_point));
      setUpTo(String(from.order_up_to));
    }
  };
  const [busy, setBusy] = useState(false);
  const where = scope === 'location' ? row.location : null;
  const run = async (policy: { reorderPoint: number; orderUpTo: number } | null) => {
    // One save at a time: the buttons are only marked while one is on its way.
    if (busy) return;
    setBusy(true);
    const ok = await save(row.item, where, policy);
    setBusy(false);
    if (ok) onDone();
  };
  // The site refuses an order-up-to level at or below the reorder point, in English and naming
  // config keys; said here, by the field, in the reader's language, before anything is sent.
  const [tried, setTried] = useState(false);
  const upToLow = tried && !levelsOk(point, upTo);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!levelsOk(point, upTo)) return setTried(true);
    void run({ reorderPoint: Number(point), orderUpTo: Number(upTo) });
  };
  // Only a setting of the chosen scope that exists can be removed: the location's own, or the
  // item's (also from a row whose location has its own).
  const removable = scope === 'location' ? row.reorder_scope === 'location' : row.item_policy !== null;
  return (
    <form className="policy-form" onSubmit={submit} onKeyDown={escapeCloses(onDone)} aria-label={t('stock.policyFor', { item: row.item, location: row.location })}>
      <fieldset>
        <legend>{t('stock.policyFor', { item: row.item, location: row.location })}</legend>
        <label>
          <input type="radio" name="scope" value="location" checked={scope === 'location'} onChange={() => choose('location')} /> {t('stock.scopeLocation', { location: row.location })}
        </label>
        <label>
          <input type="radio" name="scope" value="item" checked={scope === 'item'} onChange={() => choose('item')} /> {t('stock.scopeItem', { item: row.item })}
        </label>
      </fieldset>
      <label>
        {t('stock.reorderPoint')}
        <input type="number" name="reorderPoint" min={0} step={1} required value={point} onChange={(e) => setPoint(e.target.value)} />
      </label>
      <label>
        {t('stock.orderUpToField')}
        <input type="number" name="orderUpTo" min={1} step={1} required value={upTo} aria-invalid={upToLow || undefined} aria-describedby={upToLow ? 'policy-problem' : undefined} onChange={(e) => setUpTo(e.target.value)} />
      </label>
      {/* aria-disabled while a save is on its way, not disabled: chromium drops the focus of a
          button made disabled to the page, and a refused save left it there, not on Save. */}
      <button type="submit" className="primary" aria-disabled={busy || undefined}>
        {t('stock.savePolicy')}
      </button>
      {removable ? (
        <button type="button" name="remove" aria-disabled={busy || undefined} onClick={() => void run(null)}>
          {t('stock.removePolicy')}
        </button>
      ) : null}
      <button type="button" name="cancel" onClick={onDone}>
        {t('stock.cancel')}
      </button>
      {upToLow ? (
        <p id="policy-problem" className="hint alert" role="alert">
          ⚠ {t('stock.upToNotAbove', { point: formatNumber(lang, Number(point)) })}
        </p>
      ) : null}
      {row.reorder_set ? <p className="set-by">{setByText(t, lang, row)}</p> : null}
      <p className="hint">{t('stock.policyNote')}</p>
    </form>
  );
}

/** The reorder points people changed from this UI, newest first (opened on demand). */
function PolicyChanges() {
  const t = useT();
  const lang = useApp((s) => s.lang);
  const changes = useApp((s) => s.configChanges);
  const load = useApp((s) => s.loadConfigChanges);
  const where = ({ key, policyOf: p }: ConfigChangeView): string =>
    p === null ? key : p.location === null ? t('stock.changeForItem', { item: p.item }) : t('stock.changeAtLocation', { item: p.item, location: p.location });
  const levels = (v: unknown): string => {
    const p = v as { reorderPoint?: number; orderUpTo?: number } | null;
    return p === null || p === undefined ? t('stock.notSet') : t('stock.levels', { point: formatNumber(lang, p.reorderPoint ?? null), upTo: formatNumber(lang, p.orderUpTo ?? null) });
  };
  return (
    <details className="policy-changes" onToggle={(e) => void ((e.currentTarget as HTMLDetailsElement).open && load())}>
      <summary>{t('stock.changes')}</summary>
      {changes === null ? null : changes.length === 0 ? (
        <p className="muted">{t('stock.noChanges')}</p>
      ) : (
        <ul>
          {changes.map((c) => (
            <li key={c.id}>
              {formatTime(lang, c.atMs)} — {c.user}: {where(c)}: {levels(c.before)} → {levels(c.after)}
            </li>
          ))}
        </ul>
      )}
    </details>
  );
}

export function Stock() {
  const t = useT();
  const lang = useApp((s) => s.lang);
  const stock = useApp((s) => s.stock);
  const more = useApp((s) => s.stockMore);
  const load = useApp((s) => s.loadStock);
  // What was asked for last (the fields start with it; they may be ahead of it).
  const askedSearch = useApp((s) => s.stockSearch);
  const askedBelow = useApp((s) => s.stockBelow);
  // Whether the rows on the screen were read with a search or the filter (a read on its way or refused may be ahead of them).
  const filtered = useApp((s) => s.stockFiltered);
  const [q, setQ] = useState(askedSearch);
  const [below, setBelow] = useState(askedBelow);
  const decider = useApp(selectIsDecider);
  const [editing, setEditing] = useState<string | null>(null);
  // The form open as last rendered: a save answered closes its form only while it is still the one
  // open (left with Cancel or Escape meanwhile and another row's opened, the answer closed that one).
  const editingShown = useRef(editing);
  editingShown.current = editing;
  const closeForm = (key: string) => {
    if (editingShown.current !== key) return;
    setEditing(null);
    focusAfterClose(`button.edit-policy[data-row="${CSS.escape(key)}"]`);
  };
  // Asks the site at once on opening; typing and the tick box wait a quarter second (search-load.ts).
  useSearchLoad(() => void load(q, below), [q, below, load]);
  return (
    <section>
      <label className="search">
        {t('stock.search')}
        <input name="search" type="search" value={q} onChange={(e) => setQ(e.target.value)} />
      </label>
      <label className="filter">
        <input name="below" type="checkbox" checked={below} onChange={(e) => setBelow(e.target.checked)} /> {t('stock.belowOnly')}
      </label>
      {more && <p className="muted rows-cut">{t('stock.more', { n: formatNumber(lang, STOCK_ROWS) })}</p>}
      <Table
        label={t('nav.stock')}
        head={[t('stock.item'), t('stock.location'), t('stock.onHand'), t('stock.reserved'), t('stock.inbound'), t('stock.available'), t('stock.projected'), t('stock.reorderPoint'), t('work.waiting')]}
      >
        {stock.flatMap((r) => [
          <tr key={`${r.item}|${r.location}`} className={(r.available ?? 0) < 0 || r.below_reorder_point ? 'attention' : ''}>
            {/* A code is one word: "ITEM-007" broke at its hyphen in a narrow column (nb, 1366 wide). */}
            <td className="code">{r.item}</td>
            <td className="code">{r.location}</td>
            <td className="num">{formatNumber(lang, r.on_hand)}</td>
            <td className="num">{formatNumber(lang, r.reserved)}</td>
            <td className="num">{formatNumber(lang, r.inbound)}</td>
            <td className="num">{formatNumber(lang, r.available)}</td>
            <td className="num">{formatNumber(lang, r.projected)}</td>
            {/* The number and its "below" stay together; the scope and the ✎ button may go under
                them, so the column stays narrow enough for "Waiting for a decision" at 1024 wide. */}
            <td
              className="num reorder"
              data-scope={r.reorder_scope}
              title={
                t('stock.orderUpTo', { n: formatNumber(lang, r.order_up_to), scope: t(`stock.scope.${r.reorder_scope}`) }) +
                (r.reorder_set ? `; ${setByText(t, lang, r)}` : '')
              }
            >
              <span className="point">
                {r.below_reorder_point ? <span className="chip-alert below-tag">{t('stock.below')} </span> : null}
                {formatNumber(lang, r.reorder_point)}
              </span>
              {/* In words as well as in the title, which a touch screen never shows; the space before
                  it outside its span, so a narrow column may put it under the number. */}
              {r.reorder_scope !== 'default' ? (
                <>
                  {' '}
                  <span className="scope-tag">· {t(`stock.scopeTag.${r.reorder_scope}`)}</span>
                </>
              ) : null}
              {decider ? (
                <button
                  type="button"
                  className="edit-policy"
                  data-row={`${r.item}|${r.location}`}
                  aria-label={t('stock.editPolicy', { item: r.item, location: r.location })}
                  aria-expanded={editing === `${r.item}|${r.location}`}
                  onClick={() => setEditing(editing === `${r.item}|${r.location}` ? null : `${r.item}|${r.location}`)}
                >
                  ✎
                </button>
              ) : null}
            </td>
            <td className="waiting-cell">
              <Waiting items={r.waiting} />
            </td>
          </tr>,
          editing === `${r.item}|${r.location}` ? (
            <tr key={`${r.item}|${r.location}|edit`} className="policy-edit">
              <td colSpan={COLUMNS}>
                <PolicyForm row={r} onDone={() => closeForm(`${r.item}|${r.location}`)} />
              </td>
            </tr>
          ) : null,
        ])}
      </Table>
      {/* A search or the filter that matches nothing: said, not an empty table that looks unloaded. */}
      {stock.length === 0 && filtered ? <p className="muted no-rows">{t('rows.noMatch')}</p> : null}
      <PolicyChanges />
    </section>
  );
}
