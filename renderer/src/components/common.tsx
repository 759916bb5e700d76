import type { ReactNode } from 'react';
import type { Risk } from '../../../core/site/api.ts';
import { useT } from '../context.tsx';
import { cellText, type Lang } from '../i18n/messages.ts';

/** Risk is never colour alone: a shape and a word go with it (ISA-101, WCAG 1.4.1). */
export function RiskBadge({ risk }: { risk: Risk }) {
  const t = useT();
  const icon = risk === 'high' ? '▲' : risk === 'medium' ? '◆' : '●';
  return (
    <span className={`badge risk-${risk}`}>
      <span aria-hidden="true">{icon}</span> {t(`risk.${risk}`)}
    </span>
  );
}

/** `titles[i]`: the hover text of heading i (a column's stored name under its readable heading; `columnHeading`). */
export function Table({ head, titles, children, label }: { head: ReactNode[]; titles?: readonly (string | undefined)[]; children: ReactNode; label: string }) {
  return (
    // A scrollable region must be reachable by keyboard (WCAG 2.1.1): focusable, named.
    <div className="table-wrap" tabIndex={0} role="region" aria-label={label}>
      <table aria-label={label}>
        <thead>
          <tr>
            {head.map((h, i) => (
              <th key={i} scope="col" title={titles?.[i]}>
                {h}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}

/**
 * Letters or digits joined by hyphens or slashes: an item, location, job or resource code
 * ("ITEM-003", "J-0010"). Never begun inside a run of letters and digits (the lookbehind): one
 * that does not match from the run's start matches from none of its later letters either, and
 * trying each made a long run cost its length squared (a 100,000-character cell took 6 s).
 */
const CODE = /(?<![\p{L}\p{N}])[\p{L}\p{N}]+(?:[-/][\p{L}\p{N}]+)+/gu;

/**
 * `text` with each code in it kept on one line (`span.code`), the words around it free to wrap: a
 * browser breaks a line after a hyphen, and "material short: ITEM-/003" read as two things.
 */
export function KeepCodes({ text }: { text: string }) {
  const parts: ReactNode[] = [];
  let at = 0;
  for (const m of text.matchAll(CODE)) {
    if (m.index > at) parts.push(text.slice(at, m.index));
    parts.push(
      <span key={m.index} className="code">
        {m[0]}
      </span>,
    );
    at = m.index + m[0].length;
  }
  if (at < text.length) parts.push(text.slice(at));
  return <>{parts}</>;
}

/**
 * One value of a site table, by its column's type (a TIMESTAMP in this PC's time zone, the stored
 * text on hover) and, given its `table` and `column`, a known value of Tilstand's own tables in
 * words (`cellText`: "in progress", "pågår", the stored in_progress on hover). `lang` comes from
 * the screen: one store subscription per screen, not per cell. `codes`: the codes in a text kept
 * whole (`KeepCodes`: History's rows and the inbox's evidence). `className`: a changed cell's mark.
 */
export function ValueCell({ lang, table, column, type, value, codes = false, className }: { lang: Lang; table?: string; column?: string; type: string | undefined; value: unknown; codes?: boolean; className?: string }) {
  const { text, raw } = cellText(lang, table, column, type, value);
  // A time shown in this PC's zone or a value in words (`raw` the stored text) is no code: "02/12/2026" may break at its comma.
  return (
    <td title={raw} className={className}>
      {codes && raw === undefined ? <KeepCodes text={text} /> : text}
    </td>
  );
}

/** A table's age against its budget, as a gauge with words (calm grey unless over budget). */
export function BudgetGauge({ ageMs, budgetMs, label }: { ageMs: number; budgetMs: number; label: string }) {
  const t = useT();
  const over = ageMs > budgetMs;
  // 100 = the budget; the scale runs to 150 % so an overrun is visible as such.
  const pct = Math.min(150, Math.round((ageMs / Math.max(1, budgetMs)) * 100));
  return (
    <div className={`gauge ${over ? 'gauge-over' : ''}`}>
      <meter min={0} max={150} low={75} high={100} optimum={0} value={pct} aria-label={label} />
      <span className="gauge-text">{over ? `⚠ ${t('tables.breach')}` : t('tables.within')}</span>
    </div>
  );
}

/**
 * Puts the keyboard focus on the element `selector` finds once the closing of an inline form has
 * been rendered: the form's Cancel or Save had the focus, and with the form gone it fell to the
 * page (Tab started again from the top). Nothing happens when no such element is there.
 */
export function focusAfterClose(selector: string): void {
  if (typeof document === 'undefined') return;
  setTimeout(() => document.querySelector<HTMLElement>(selector)?.focus(), 0);
}

/**
 * Whether the keyboard focus has dropped, so that putting it somewhere takes nobody's place: it is
 * on the page (`body`) or nowhere, on an element no longer on the page (a fake page's; chromium
 * then answers the body), or on an element that `from` matches (a button the change disabled, which
 * chromium drops the focus of). A focus the person put elsewhere is not dropped. The one test of
 * `focusIfDropped`, `errorLineFocus`'s `closed` and `focusFirstOf`'s `ifDropped`.
 */
export function focusDropped(at: Element | null | undefined, body: Element | null | undefined, from?: string): boolean {
  if (at === null || at === undefined || at === body) return true;
  if ((at as { isConnected?: boolean }).isConnected === false) return true;
  return from !== undefined && typeof at.matches === 'function' && at.matches(from);
}

/**
 * Puts the keyboard focus on the element `selector` finds once what was just done has been
 * rendered, if the focus is then on the page or on `from` (a button the change disabled, which
 * chromium drops the focus of): a focus the person put elsewhere meanwhile stays.
 */
export function focusIfDropped(selector: string, from: string): void {
  if (typeof document === 'undefined') return;
  setTimeout(() => {
    if (!focusDropped(document.activeElement, document.body, from)) return;
    document.querySelector<HTMLElement>(selector)?.focus();
  }, 0);
}

/** What of the page `errorLineFocus` uses (a fake one in the unit test). */
export interface FocusDocument {
  readonly activeElement: Element | null;
  readonly body: Element | null;
  querySelector(selector: string): Element | null;
  addEventListener(type: 'focusin', listener: (e: { target: EventTarget | null }) => void): void;
  removeEventListener(type: 'focusin', listener: (e: { target: EventTarget | null }) => void): void;
}

/**
 * Where the keyboard focus goes when the error line (`p.error`, App.tsx) is closed: its ✖ button
 * (or the line clicked) goes with it, and chromium drops the focus to the page — a keyboard or
 * scanner user lost their place, the next Enter or scan going nowhere. `watch` follows the last
 * element focused outside the line (the field or button of what failed, or wherever the person
 * went since); `closed` gives it the focus back once the line has gone, if it is still on the page,
 * else the navigation's current screen — only while the focus is on the page or in the gone line: a
 * focus the person put elsewhere meanwhile stays.
 */
export function errorLineFocus(doc: FocusDocument | undefined = typeof document === 'undefined' ? undefined : document) {
  let last: Element | null = null;
  const follow = (e: { target: EventTarget | null }) => {
    const el = e.target as (Element & { closest?: (s: string) => Element | null }) | null;
    if (el && typeof el.closest === 'function' && el.closest('p.error') === null) last = el;
  };
  return {
    /** Starts following the focus; the returned function stops (an effect's cleanup). */
    watch(): () => void {
      if (!doc) return () => {};
      doc.addEventListener('focusin', follow);
      return () => doc.removeEventListener('focusin', follow);
    },
    closed(): void {
      if (!doc) return;
      setTimeout(() => {
        if (!focusDropped(doc.activeElement, doc.body)) return;
        const back = last as (HTMLElement & { isConnected?: boolean }) | null;
        const to = back !== null && back.isConnected !== false ? back : (doc.querySelector('nav [aria-current="page"]') as HTMLElement | null);
        to?.focus();
      }, 0);
    },
  };
}

/** What of the page `focusFirstOf` uses (a fake one in the unit test); `activeElement` and `body` with `ifDropped`. */
export type QueryDocument = Pick<Document, 'querySelector'>;

/**
 * Puts the keyboard focus on the first of `selectors` that finds an element once what was just
 * done has been rendered (as `focusAfterClose`, with places to fall back to); nothing when none
 * does. `doc` is the page (a fake one in the unit test).
 */
export function focusFirstOf(selectors: readonly string[], doc: QueryDocument | undefined = typeof document === 'undefined' ? undefined : document, o: { ifDropped?: boolean } = {}): void {
  if (!doc) return;
  setTimeout(() => {
    // `ifDropped`: only while the focus is on the page (its element gone): one put elsewhere stays.
    if (o.ifDropped) {
      const { activeElement: at, body } = doc as unknown as { activeElement?: Element | null; body?: Element | null };
      if (!focusDropped(at, body)) return;
    }
    for (const s of selectors) {
      const el = doc.querySelector<HTMLElement>(s);
      if (el) return void el.focus();
    }
  }, 0);
}

/** Escape in an inline form closes it, as its Cancel button does. */
export function escapeCloses(close: () => void) {
  return (e: { key: string; preventDefault(): void }) => {
    if (e.key !== 'Escape') return;
    e.preventDefault();
    close();
  };
}

/**
 * A site table's columns in the order the floor reads them: the key first, then `first` (the
 * inbox's checked state puts the columns that changed there), then the rest in `all`'s order, the
 * sequence columns last — a module's event counter, never what a row is about, had pushed the
 * columns that matter out of view at 1280 and 1024 px. Key, `first` and sequence columns not in
 * `all` are left out (a snapshot read in an older schema). History and the inbox's evidence.
 */
export function keyFirstColumns(all: readonly string[], keyColumns: readonly string[] = [], sequenceColumns: readonly string[] = [], first: readonly string[] = []): string[] {
  const seq = new Set(sequenceColumns);
  const front = [...new Set([...keyColumns, ...first])].filter((c) => all.includes(c));
  return [...front, ...all.filter((c) => !front.includes(c) && !seq.has(c)), ...all.filter((c) => seq.has(c) && !front.includes(c))];
}

/**
 * An evidence table's columns in the order shown (`keyFirstColumns`): the columns of rows in JSON
 * form, in the order they first appear, key first and sequence columns last. (The evidence does
 * not say which columns a rule's explanation is about, so the rest keep their order.)
 */
export function evidenceColumns(rows: readonly Record<string, unknown>[], keyColumns: readonly string[] = [], sequenceColumns: readonly string[] = [], first: readonly string[] = []): string[] {
  return keyFirstColumns([...new Set(rows.flatMap((r) => Object.keys(r)))], keyColumns, sequenceColumns, first);
}
