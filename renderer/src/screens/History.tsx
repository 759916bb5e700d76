import { useEffect, useState } from 'react';
import type { ReadPointRequest, SiteApiMethods } from '../../../core/site/api.ts';
import { keyFirstColumns, Table, ValueCell } from '../components/common.tsx';
import { useApp, useT } from '../context.tsx';
import { columnHeading, formatTime, type Lang, type MessageKey } from '../i18n/messages.ts';
import { useSearchLoad } from '../search-load.ts';
import { TAGS_SHOWN } from '../store/store.ts';

type Kind = 'latest' | 'tag' | 'snapshot' | 'time';

/** The change marks a comparison's rows carry (Paimon's row kinds), each with its word (history.kind.*). */
const KINDS = new Set(['+I', '-U', '+U', '-D']);

type TagInfo = SiteApiMethods['tags']['res'][number];
type Change = SiteApiMethods['diff']['res']['changes'][number];
export type TagKind = 'agent' | 'decision' | 'checked' | 'hourly' | 'other';

/**
 * What made a tag, by its name's prefix: an agent run's evidence (`agent-<run id>`, core/agents),
 * a decided proposal's (`decision-<proposal id>`) and an approval's recheck (`checked-<proposal
 * id>`, core/inbox), the hourly tags sync ships (`hourly-<yyyyMMddHH>`, core/sync); anything else
 * (a tag made with `tilstand table tag create`) is "other". In this order in the picker.
 */
const TAG_KINDS: readonly (readonly [TagKind, string])[] = [['agent', 'agent-'], ['decision', 'decision-'], ['checked', 'checked-'], ['hourly', 'hourly-']];

/**
 * The tags as the picker groups them: by kind (`TAG_KINDS`' order, `other` last, a kind without
 * tags left out), newest first in each — by when the tag was made, a decision's tag pointing at the
 * older snapshot the agent read — then by snapshot. The site sends them newest snapshot first, in
 * one list where a minute's agent runs buried the few decisions.
 */
export function tagGroups(tags: readonly TagInfo[]): { kind: TagKind; tags: TagInfo[] }[] {
  const kindOf = (name: string): TagKind => TAG_KINDS.find(([, prefix]) => name.startsWith(prefix))?.[0] ?? 'other';
  const newest = (a: TagInfo, b: TagInfo) => (b.createdMs ?? -1) - (a.createdMs ?? -1) || b.snapshotId - a.snapshotId || (a.name < b.name ? 1 : a.name > b.name ? -1 : 0);
  return [...TAG_KINDS.map(([kind]) => kind), 'other' as const]
    .map((kind) => ({ kind, tags: tags.filter((x) => kindOf(x.name) === kind).sort(newest) }))
    .filter((g) => g.tags.length > 0);
}

/** A tag as the picker lists it: its name (what the CLI and HQ call it), its snapshot and, when the site knows it, when it was made, in this PC's time. */
export function tagLabel(lang: Lang, tag: TagInfo): string {
  return tag.createdMs === null ? `${tag.name} (#${tag.snapshotId})` : `${tag.name} (#${tag.snapshotId}, ${formatTime(lang, tag.createdMs)})`;
}

/** The tag picker's options, grouped by kind in words (`tagGroups`, `tagLabel`). */
export function TagOptions({ lang, tags }: { lang: Lang; tags: readonly TagInfo[] }) {
  const t = useT();
  return (
    <>
      {tagGroups(tags).map((g) => (
        <optgroup key={g.kind} label={t(`history.tagGroup.${g.kind}`)}>
          {g.tags.map((x) => (
            <option key={x.name} value={x.name}>
              {tagLabel(lang, x)}
            </option>
          ))}
        </optgroup>
      ))}
    </>
  );
}

/** A table's column headings in the chosen language and their hover texts (the stored names; `columnHeading`). */
function headings(lang: Lang, table: string, columns: readonly string[]): { head: string[]; titles: (string | undefined)[] } {
  const h = columns.map((c) => columnHeading(lang, table, c));
  return { head: h.map((x) => x.text), titles: h.map((x) => x.stored) };
}

/**
 * The order History shows a read's columns in, as indexes into its `columns` (and each row): the
 * key first and the sequence columns last, the rest as stored — as the inbox's evidence shows them
 * (`keyFirstColumns`). Stock's stored order puts a module's sequence column after each of its
 * columns; a site that does not name its key and sequence columns (an older one) keeps the stored order.
 */
export function columnOrder(r: { columns: readonly string[]; keyColumns?: readonly string[]; sequenceColumns?: readonly string[] }): number[] {
  return keyFirstColumns(r.columns, r.keyColumns, r.sequenceColumns).map((c) => r.columns.indexOf(c));
}

const sameValue = (a: unknown, b: unknown): boolean => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/** What a comparison marks in one of its rows (`changedCells`). */
export interface CellChanges {
  /** The indexes of the cells marked as changed: for an update, the values that differ from its other half's, the sequence columns' left out. */
  cells: Set<number>;
  /** An update whose only change is in the sequence columns: the module sent the row again, with the same values and a new number. */
  sequenceOnly: boolean;
}

/**
 * Per change of a comparison, the cells that changed: for an update, its before (-U) and the after
 * (+U) that follows it — the site keeps them together (`cutChanges`) and, when it names the key
 * columns, for the same key — the cells whose values differ, marked in both rows; nothing for an
 * added or removed row (the whole row is the change) or a before or after left alone by "Rows
 * containing". A sequence column's change is not marked: a module numbers every event it sends, so
 * nearly every update moves one (in stock all three were marked on almost every pair, and a change
 * in on hand or reserved did not stand out); an update that changed nothing else is `sequenceOnly`.
 */
export function changedCells(changes: readonly Change[], keyColumns: readonly string[] = [], columns: readonly string[] = [], sequenceColumns: readonly string[] = []): CellChanges[] {
  const out: CellChanges[] = changes.map(() => ({ cells: new Set<number>(), sequenceOnly: false }));
  const key = keyColumns.map((k) => columns.indexOf(k)).filter((i) => i >= 0);
  const sequence = new Set(sequenceColumns.map((c) => columns.indexOf(c)).filter((i) => i >= 0));
  for (let i = 0; i + 1 < changes.length; i++) {
    const before = changes[i]!;
    const after = changes[i + 1]!;
    if (before.kind !== '-U' || after.kind !== '+U' || !key.every((k) => sameValue(before.row[k], after.row[k]))) continue;
    const n = Math.max(before.row.length, after.row.length);
    let sequenceMoved = false;
    for (let j = 0; j < n; j++) {
      if (sameValue(before.row[j], after.row[j])) continue;
      if (sequence.has(j)) sequenceMoved = true;
      else (out[i]!.cells.add(j), out[i + 1]!.cells.add(j));
    }
    if (sequenceMoved && out[i]!.cells.size === 0) out[i]!.sequenceOnly = out[i + 1]!.sequenceOnly = true;
  }
  return out;
}

/** A comparison row's class: the change, and added and removed rows marked as a whole (an update's row is not: its changed cells are). */
const CHANGE_ROW: Record<string, string> = { '+I': 'change change-plus', '-D': 'change change-minus', '-U': 'change change-before', '+U': 'change change-after' };

/** What is typed or picked for each kind of point: each keeps its own (a tag's name is no time). */
export interface PointFields {
  tag: string;
  snapshot: string;
  /** A datetime-local field's value: this PC's wall clock, `2026-12-03T07:30`. */
  time: string;
}

/** The point to read, or null while the chosen kind's field holds none (nothing to send: the site would refuse it). */
export function readPoint(kind: Kind, f: PointFields): ReadPointRequest | null {
  if (kind === 'latest') return { latest: true };
  if (kind === 'tag') return f.tag ? { tag: f.tag } : null;
  if (kind === 'snapshot') return /^\s*\d+\s*$/.test(f.snapshot) ? { snapshotId: Number(f.snapshot) } : null;
  const ms = f.time ? new Date(f.time).getTime() : NaN;
  return Number.isFinite(ms) ? { timestampMs: ms } : null;
}

/** No tags (one array, so the screen's effects that depend on the tags do not run at each render). */
const NO_TAGS: readonly TagInfo[] = [];

export function History() {
  const t = useT();
  const lang = useApp((s) => s.lang);
  const tables = useApp((s) => s.tables);
  const history = useApp((s) => s.history);
  const diff = useApp((s) => s.diff);
  const loadTables = useApp((s) => s.loadTables);
  const loadHistory = useApp((s) => s.loadHistory);
  const loadDiff = useApp((s) => s.loadDiff);
  // Only the shown table's tags: while a table just picked has its own on their way, the last
  // table's are none of its (the picker offered them, one picked, and Show read it of this table).
  const storedTags = useApp((s) => s.tags);
  const tagsTable = useApp((s) => s.tagsTable);
  const tagsReadFor = useApp((s) => s.tagsReadFor);
  const loadTags = useApp((s) => s.loadTags);
  const [table, setTable] = useState('stock');
  const tags = tagsTable === table ? storedTags : NO_TAGS;
  const [kind, setKind] = useState<Kind>('latest');
  const [fields, setFields] = useState<PointFields>({ tag: '', snapshot: '', time: '' });
  const setField = (k: keyof PointFields, v: string) => setFields((f) => ({ ...f, [k]: v }));
  const [tagSearch, setTagSearch] = useState('');
  const [contains, setContains] = useState('');
  // The filter the shown rows were read with (the field may have changed since, and a read asked
  // for with another may have failed): the store keeps it with the rows.
  const applied = useApp((s) => s.historyContains);
  useEffect(() => void loadTables(), [loadTables]);
  // The screen opens on the latest state of the table (the stock), as it does on a table picked
  // while "Latest" is chosen; any other point is read when "Show" is pressed.
  useEffect(() => {
    if (kind !== 'latest') return;
    void loadHistory(table, { latest: true }, contains);
    // Not on `contains`: the filter is read when asked for, not at every keystroke.
  }, [table, kind, loadHistory]);
  // At once on opening; a search typed waits a quarter second (search-load.ts): not a request per key.
  useSearchLoad(() => void loadTags(table, tagSearch.trim() || undefined), [table, tagSearch, loadTags]);
  // Picking "tag" offers the newest tag (agent runs tag what they read: `agent-<run id>`). With
  // none listed (a search that finds none, a table without tags) none is picked: the one picked
  // before stayed, out of sight, and Show read it.
  useEffect(() => {
    if (kind === 'tag' && !tags.some((x) => x.name === fields.tag) && (tags[0] || fields.tag !== '')) setField('tag', tags[0]?.name ?? '');
  }, [kind, tags, fields.tag]);
  // Null while the chosen point is not filled in: Show and Compare wait for it.
  const point = readPoint(kind, fields);
  // Why Show and Compare wait, beside them: disabled with nothing said (a tag search that finds
  // none, a table without tags, a snapshot that is no number), they looked broken.
  // (A tag kind with tags listed and none picked yet is the moment before the effect above picks one.)
  // Of the tags, only once those of the table and search shown have come: while they are on their
  // way (or the search's pause runs) nothing is said, and after a read that failed the error line
  // says why (it said "stock has no tags yet" of a table whose tags had not come).
  const tagsCame = tagsReadFor !== null && tagsReadFor.table === table && tagsReadFor.search === tagSearch.trim();
  const missing: string | null =
    point !== null || (kind === 'tag' && (tags.length > 0 || !tagsCame))
      ? null
      : kind === 'tag'
        ? tagSearch.trim() !== ''
          ? t('history.noTagMatch', { table, q: tagSearch.trim() })
          : t('history.noTags', { table })
        : kind === 'snapshot'
          ? t('history.snapshotMissing')
          : t('history.timeMissing');
  // Key first, sequence columns last (`columnOrder`); the rows' cells in the same order.
  const historyCols = history ? columnOrder(history) : [];
  const diffCols = diff ? columnOrder(diff) : [];
  const diffHead = diff ? headings(lang, diff.table, diffCols.map((j) => diff.columns[j]!)) : null;
  const diffChanged = diff ? changedCells(diff.changes, diff.keyColumns, diff.columns, diff.sequenceColumns) : [];
  return (
    <section>
      <form
        className="history-form"
        onSubmit={(e) => {
          e.preventDefault();
          if (!point) return;
          void loadHistory(table, point, contains);
        }}
      >
        <label>
          {t('history.table')}
          <select name="table" value={table} onChange={(e) => setTable(e.target.value)}>
            {tables.map((x) => (
              <option key={x.table} value={x.table}>
                {x.table}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t('history.point')}
          <select name="kind" value={kind} onChange={(e) => setKind(e.target.value as Kind)}>
            <option value="latest">{t('history.latest')}</option>
            <option value="tag">{t('history.tag')}</option>
            <option value="snapshot">{t('history.snapshot')}</option>
            <option value="time">{t('history.time')}</option>
          </select>
        </label>
        {kind === 'tag' && (
          <>
            <label>
              {t('history.tagSearch')}
              <input name="tagSearch" type="search" value={tagSearch} onChange={(e) => setTagSearch(e.target.value)} />
            </label>
            <label>
              {t('history.tag')}
              <select name="tag" value={fields.tag} onChange={(e) => setField('tag', e.target.value)}>
                <TagOptions lang={lang} tags={tags} />
              </select>
            </label>
          </>
        )}
        {(kind === 'snapshot' || kind === 'time') && (
          <label>
            {t(kind === 'snapshot' ? 'history.snapshot' : 'history.time')}
            <input key={kind} name="value" type={kind === 'time' ? 'datetime-local' : 'text'} value={fields[kind]} onChange={(e) => setField(kind, e.target.value)} />
          </label>
        )}
        <label>
          {t('history.contains')}
          <input name="contains" type="search" value={contains} title={t('history.containsHint')} placeholder={t('history.containsPlaceholder')} onChange={(e) => setContains(e.target.value)} />
        </label>
        <button type="submit" className="primary" disabled={!point} aria-describedby={missing ? 'history-point-missing' : undefined}>
          {t('history.show')}
        </button>
        <button
          type="button"
          disabled={!point}
          aria-describedby={missing ? 'history-point-missing' : undefined}
          onClick={() => {
            if (!point) return;
            void loadDiff(table, point, contains);
          }}
        >
          {t('history.compare')}
        </button>
      </form>
      {missing && (
        <p id="history-point-missing" className="muted point-missing" role="status">
          {missing}
        </p>
      )}
      {kind === 'tag' && tags.length >= TAGS_SHOWN && <p className="muted tags-cut">{t('history.tagsNewest', { n: TAGS_SHOWN })}</p>}
      {history && !diff && history.snapshotId === null && <p className="muted history-summary">{t('history.empty', { table: history.table })}</p>}
      {history && !diff && history.snapshotId !== null && (
        <>
          <p className="history-summary">
            {t(history.more ? 'history.atMore' : 'history.at', { table: history.table, id: history.snapshotId, time: formatTime(lang, history.snapshotMs), n: history.rows.length })}
          </p>
          {applied && <p className="muted">{t('history.filtered', { q: applied })}</p>}
          <Table label={history.table} {...headings(lang, history.table, historyCols.map((j) => history.columns[j]!))}>
            {history.rows.map((r, i) => (
              <tr key={i}>
                {/* A status, state or reason of Tilstand's own tables in words, the stored value on hover. */}
                {historyCols.map((j) => (
                  <ValueCell key={j} lang={lang} table={history.table} column={history.columns[j]} type={history.types[j]} value={r[j]} codes />
                ))}
              </tr>
            ))}
          </Table>
        </>
      )}
      {diff && (
        <p className="history-summary">
          {t(diff.changes.length === 0 ? 'history.noChanges' : diff.more ? 'history.changesMore' : 'history.changes', {
            table: diff.table,
            n: diff.changes.length,
            from: diff.from.snapshotId ?? 0,
            fromTime: formatTime(lang, diff.from.snapshotMs),
            to: diff.to.snapshotId ?? 0,
            toTime: formatTime(lang, diff.to.snapshotMs),
          })}
        </p>
      )}
      {diff && applied && <p className="muted">{t('history.filtered', { q: applied })}</p>}
      {diff && diffHead && diff.changes.length > 0 && (
        <Table label={t('history.changesLabel', { table: diff.table })} head={[t('history.change'), ...diffHead.head]} titles={[undefined, ...diffHead.titles]}>
          {diff.changes.map((c, i) => (
            <tr key={i} className={`${CHANGE_ROW[c.kind] ?? 'change'}${diffChanged[i]!.sequenceOnly ? ' change-sequence-only' : ''}`}>
              {/* Paimon's marks in words (removed, before, after, added); the mark on hover for who knows them. */}
              <td className="change-kind" data-kind={c.kind} title={c.kind}>
                {KINDS.has(c.kind) ? t(`history.kind.${c.kind}` as MessageKey) : c.kind}
                {/* Only a module's sequence numbers moved: said in words, the pair muted, so the updates that changed a value stand out. */}
                {diffChanged[i]!.sequenceOnly && (
                  <span className="sequence-only small" title={t('history.sequenceOnlyTitle')}>
                    {' '}
                    {t('history.sequenceOnly')}
                  </span>
                )}
              </td>
              {/* An update's changed cells marked in its before and after: which value changed, not only which row (its sequence numbers not). */}
              {diffCols.map((j) => (
                <ValueCell key={j} lang={lang} table={diff.table} column={diff.columns[j]} type={diff.types[j]} value={c.row[j]} codes className={diffChanged[i]!.cells.has(j) ? 'changed' : undefined} />
              ))}
            </tr>
          ))}
        </Table>
      )}
    </section>
  );
}
