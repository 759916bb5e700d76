import { Fragment, useEffect, useRef, useState, type FormEvent } from 'react';
import type { DeadLetterGroupView, DeadLetterView } from '../../../core/site/api.ts';
import { escapeCloses, focusAfterClose, focusFirstOf, KeepCodes, Table } from '../components/common.tsx';
import { useApp, useT } from '../context.tsx';
import { formatDuration, formatNumber, formatTime, pluralKey, valueWord, type Lang } from '../i18n/messages.ts';
import { selectIsDecider } from '../store/store.ts';

// The reasons core/ingest gives a dead letter (DEAD_LETTER_REASONS) are said in words (`valueWord`,
// messages.ts VALUE_WORDS); another, from a newer site, is shown as it came.

/** The open letters' groups the summary names, the largest first (`tilstand status` names as many); the rest are counted. */
export const SOURCES_SHOWN = 5;

/** Module and stream of a topic: its last two levels (`tilstand/<site>/events/<module>/<stream>`). */
export const sourceOf = (topic: string): string => topic.split('/').slice(-2).join('/');

type LetterFilter = { topic: string; reason: string };

const sameGroup = (a: LetterFilter | null, b: LetterFilter): boolean => a !== null && a.topic === b.topic && a.reason === b.reason;

/**
 * Where the open letters come from, above the list: the list shows the oldest few, and a module
 * sending thousands a minute fills it while another's two are out of sight. The largest groups of
 * one topic and reason, worded, and how many letters the others hold. Each group is a button that
 * lists only its letters (the site chooses them before its limit); pressed again, or "Show all",
 * the list is of every letter again.
 */
function LetterSources({ groups }: { groups: readonly DeadLetterGroupView[] }) {
  const t = useT();
  const lang = useApp((s) => s.lang);
  const filter = useApp((s) => s.deadLetterFilter);
  // The line says what the list shown is of: the group chosen may be on its way still.
  const listed = useApp((s) => s.deadLettersReadWith);
  const choose = useApp((s) => s.filterDeadLetters);
  // A group chosen keeps its "Show all" when it has emptied (every letter of it closed) or left the five.
  if (groups.length === 0 && listed === null) return null;
  const rest = groups.slice(SOURCES_SHOWN).reduce((n, g) => n + g.count, 0);
  const reasonText = (reason: string) => valueWord(lang, 'dead_letters', 'reason', reason) ?? reason;
  return (
    <div className="letter-sources">
      {groups.length > 0 && t('dead.sources')}
      {groups.length > 0 && (
        <ul>
          {groups.slice(0, SOURCES_SHOWN).map((g) => (
            <li key={`${g.topic}\u0000${g.reason}`} title={g.topic}>
              <button type="button" className="source" aria-pressed={sameGroup(filter, g)} onClick={() => void choose(sameGroup(filter, g) ? null : { topic: g.topic, reason: g.reason })}>
                {t('dead.fromSource', { n: formatNumber(lang, g.count), reason: reasonText(g.reason), source: sourceOf(g.topic) })}
              </button>
            </li>
          ))}
          {rest > 0 && <li>{t(pluralKey(lang, 'dead.sourcesMore', rest), { n: formatNumber(lang, rest) })}</li>}
        </ul>
      )}
      {listed !== null && (
        <p className="filtered" role="status">
          <span title={listed.topic}>{t('dead.filtered', { reason: reasonText(listed.reason), source: sourceOf(listed.topic) })}</span>{' '}
          <button type="button" className="show-all" onClick={() => void choose(null)}>
            {t('dead.showAll')}
          </button>
        </p>
      )}
    </div>
  );
}

/** A CSS attribute value in double quotes (a letter id is the site's; no `CSS.escape` outside a browser). */
const quoted = (v: string): string => `"${v.replace(/["\\]/g, '\\$&')}"`;

/**
 * Where the keyboard focus goes once letter `id` was dismissed: its form and its Dismiss are gone,
 * and the focus fell to the page. The Dismiss of the next open letter as listed (wrapping round),
 * skipping those the same dismissal closed (`alike`: the open ones with its topic and reason; a
 * row without a Dismiss is passed over when the focus is placed), else the list itself.
 */
export function focusAfterDismissal(rows: readonly Pick<DeadLetterView, 'id' | 'status' | 'topic' | 'reason'>[], id: string, alike: boolean): string[] {
  const at = rows.findIndex((r) => r.id === id);
  const me = rows[at];
  const order = at < 0 ? rows : [...rows.slice(at + 1), ...rows.slice(0, at)];
  const next = order.filter((r) => r.status === 'open' && r.id !== id && !(alike && me && r.topic === me.topic && r.reason === me.reason));
  return [...next.map((r) => `tr[data-letter=${quoted(r.id)}] button.dismiss`), 'section.dead-letters .table-wrap'];
}

/**
 * Where the keyboard focus goes once letter `id`'s "Replay this and every open one like it" is
 * answered, if the focus fell to the page: a replay that mends the letter closes it and its buttons
 * go (the focus fell to the page). Its own Replay while it still fails, else the next open letter's
 * Replay as listed before the replay (wrapping round; those it closed are no longer on the page
 * when the focus is placed), else the list.
 */
export function focusAfterReplay(rows: readonly Pick<DeadLetterView, 'id' | 'status'>[], id: string): string[] {
  const at = rows.findIndex((r) => r.id === id);
  const order = at < 0 ? rows : [...rows.slice(at + 1), ...rows.slice(0, at)];
  const next = order.filter((r) => r.status === 'open' && r.id !== id);
  return [id, ...next.map((r) => r.id)].map((x) => `tr[data-letter=${quoted(x)}] button.replay-alike`).concat('section.dead-letters .table-wrap');
}

const JSON_SPACE = new Set([' ', '\t', '\n', '\r']);

/**
 * A letter's payload as the row shows it: valid JSON indented, two spaces a level, one member a
 * line; anything else verbatim — a dead letter may be malformed bytes, and what came is what
 * whoever fixes the module needs to see. The text is re-indented, not parsed and written again:
 * a number, an escape or a repeated key stays as the module sent it (12345678901234567890 would
 * come back as 12345678901234567000, "\u00e5" as "å").
 */
export function prettyPayload(payload: string): string {
  try {
    JSON.parse(payload);
  } catch {
    return payload;
  }
  let out = '';
  let depth = 0;
  const line = () => `\n${'  '.repeat(depth)}`;
  // Each step moves `i` on (valid JSON: every string ends), so the loop ends within the text's length.
  for (let i = 0; i < payload.length; ) {
    const c = payload[i]!;
    if (c === '"') {
      let j = i + 1;
      while (j < payload.length && payload[j] !== '"') j += payload[j] === '\\' ? 2 : 1;
      out += payload.slice(i, j + 1);
      i = j + 1;
    } else if (JSON_SPACE.has(c)) {
      i++;
    } else if (c === '{' || c === '[') {
      let j = i + 1;
      while (JSON_SPACE.has(payload[j] ?? '')) j++;
      if (payload[j] === (c === '{' ? '}' : ']')) {
        // Empty: `{}` and `[]` on one line.
        out += c + payload[j];
        i = j + 1;
      } else {
        depth++;
        out += c + line();
        i++;
      }
    } else if (c === '}' || c === ']') {
      depth--;
      out += line() + c;
      i++;
    } else if (c === ',') {
      out += `,${line()}`;
      i++;
    } else if (c === ':') {
      out += ': ';
      i++;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/**
 * A topic that may break after each slash (`<wbr>`), not elsewhere: in one piece,
 * tilstand/demo/events/inventory/stock took a third of a 1024 px screen from the payload beside it.
 */
export function Topic({ topic }: { topic: string }) {
  return (
    <>
      {topic.split('/').map((part, i, all) => (
        <Fragment key={i}>
          {part}
          {i < all.length - 1 && (
            <>
              /<wbr />
            </>
          )}
        </Fragment>
      ))}
    </>
  );
}

/** The columns of the letters' table (received, reason, topic, payload, buttons): the dismissal's row spans them all. */
const LETTER_COLUMNS = 5;

/**
 * The dismissal of letter `id`, in a row of its own under the letter's, across the whole table: in
 * the letter's last cell the note field was about 250 px, too narrow for a sentence, and wider
 * there it pushed the table past a 1024 px screen.
 */
export function DismissRow(p: {
  id: string;
  note: string;
  setNote: (note: string) => void;
  /** The open letters like it listed here, and whether to offer "also every other" (some like it listed or unlisted). */
  alikeListed: number;
  offerAlike: boolean;
  alike: boolean;
  setAlike: (alike: boolean) => void;
  busy: boolean;
  onSubmit: (e: FormEvent) => void;
  onCancel: () => void;
}) {
  const t = useT();
  const lang = useApp((s) => s.lang);
  return (
    <tr className="dismiss-row" data-dismissing={p.id}>
      <td colSpan={LETTER_COLUMNS}>
        <form className="dismiss" onSubmit={p.onSubmit} onKeyDown={escapeCloses(p.onCancel)}>
          <label className="note">
            {t('dead.note')}
            <input name="dismissNote" autoFocus maxLength={500} value={p.note} onChange={(e) => p.setNote(e.target.value)} />
          </label>
          {p.offerAlike && (
            <label className="filter">
              <input name="dismissAlike" type="checkbox" checked={p.alike} onChange={(e) => p.setAlike(e.target.checked)} /> {t('dead.alike', { n: formatNumber(lang, p.alikeListed) })}
            </label>
          )}
          {/* aria-disabled while a replay or dismissal is on its way (the store sends nothing then),
              not disabled: chromium drops the focus of a button made disabled to the page, and a
              refused dismissal left it there, not on its form. */}
          <button className="primary" type="submit" disabled={p.note.trim() === ''} aria-disabled={p.busy || undefined}>
            {t('dead.dismiss')}
          </button>
          <button type="button" onClick={p.onCancel}>
            {t('users.cancel')}
          </button>
        </form>
      </td>
    </tr>
  );
}

/** A letter's reason in words with its code beside it, for whoever fixes the module or binding; a reason this UI does not know as it came. */
function ReasonWords({ lang, reason }: { lang: Lang; reason: string }) {
  const word = valueWord(lang, 'dead_letters', 'reason', reason);
  return word === undefined ? (
    <strong>{reason}</strong>
  ) : (
    <>
      <strong>{word}</strong>
      <span className="mono small reason-code"> {reason}</span>
    </>
  );
}

export function DeadLetters() {
  const t = useT();
  const lang = useApp((s) => s.lang);
  const rows = useApp((s) => s.deadLetters);
  const groups = useApp((s) => s.deadLetterGroups);
  const result = useApp((s) => s.replayResult);
  const load = useApp((s) => s.loadDeadLetters);
  const replay = useApp((s) => s.replayDeadLetters);
  const dismiss = useApp((s) => s.dismissDeadLetters);
  // A replay or dismissal on its way: its buttons wait for it (a second tap would replace
  // "replayed n" with "replayed 0", or dismiss what is already closed).
  const busy = useApp((s) => s.deadLettersBusy);
  // A shift lead or an admin closes a letter no replay can mend (a test message, a value the
  // module got wrong) with a note, in its row, so the dead-letters alarm can clear.
  const mayDismiss = useApp(selectIsDecider);
  // A viewer only looks (the site refuses a viewer's replay: it writes the state tables).
  const mayReplay = useApp((s) => !!s.user?.roles.some((r) => r !== 'viewer'));
  const [dismissing, setDismissing] = useState<string | null>(null);
  // The dismissal open as last rendered: one answered closes its form only while it is still the
  // one open (left meanwhile and another letter's begun, the answer closed that one and its note).
  const dismissingShown = useRef(dismissing);
  dismissingShown.current = dismissing;
  const [note, setNote] = useState('');
  // Also every other open letter with the same topic and reason (a vendor's test run, a module
  // sending one wrong value): one note closes them all, listed or not (the site finds them).
  const [alike, setAlike] = useState(false);
  const filter = useApp((s) => s.deadLetterFilter);
  const listed = useApp((s) => s.deadLettersReadWith);
  // How many open letters the list is of: its group's (its count in the summary), else all.
  const openCount = useApp((s) => (s.deadLettersReadWith === null ? (s.status?.deadLetters ?? null) : (s.deadLetterGroups.find((g) => sameGroup(s.deadLettersReadWith, g))?.count ?? null)));
  // How long the site keeps a closed letter (config deadLetters.closedRetentionMs; 0: for good).
  const keepClosedMs = useApp((s) => s.status?.deadLetterClosedRetentionMs ?? 0);
  useEffect(() => void load(), [load]);
  const othersLike = (id: string): string[] => {
    const r = rows.find((x) => x.id === id);
    return r ? rows.filter((x) => x.id !== id && x.status === 'open' && x.topic === r.topic && x.reason === r.reason).map((x) => x.id) : [];
  };
  const close = () => (setDismissing(null), setNote(''), setAlike(false));
  // Cancelled (its button or Escape): the focus goes back to the row's Dismiss, where it was.
  const cancel = (id: string) => (close(), focusAfterClose(`tr[data-letter="${CSS.escape(id)}"] button.dismiss`));
  const submit = async (e: FormEvent, id: string) => {
    e.preventDefault();
    if (note.trim() === '') return;
    // The open letters as listed now: after the reload the dismissed one has moved among the closed.
    const then = focusAfterDismissal(rows, id, alike);
    if ((await dismiss([id], note, alike)) && dismissingShown.current === id) (close(), focusFirstOf(then));
  };
  // A letter's replay: mended, its buttons are gone, and the focus goes on (`focusAfterReplay`).
  const replayLetter = async (id: string) => {
    const then = focusAfterReplay(rows, id);
    await replay([id], true);
    focusFirstOf(then, undefined, { ifDropped: true });
  };
  const openShown = rows.filter((r) => r.status === 'open').length;
  // With a group chosen, one of its letters: until the group's list comes, the rows are still the
  // last list's, and their first open letter was another group's, replayed with all like it.
  const firstOpen = rows.find((r) => r.status === 'open' && (filter === null || sameGroup(filter, r)));
  // More open than listed: some like it may not be on the screen.
  const unlisted = openCount !== null && openCount > openShown;
  return (
    <section className="dead-letters">
      {mayReplay && (
        // With a group chosen it replays that group (its first open letter and every one like it,
        // listed or not), not every open letter of every module the screen no longer shows.
        // aria-disabled, not disabled, while busy or with nothing open: the keyboard focus stays on
        // it (disabled, the focus fell to the page as the press made it busy), as on a letter's Replay.
        <button className="primary" aria-disabled={busy || firstOpen === undefined || undefined} onClick={() => void (firstOpen === undefined ? undefined : filter === null ? replay() : replay([firstOpen.id], true))}>
          {t(filter === null ? 'dead.replay' : 'dead.replayGroup')}
        </button>
      )}
      <LetterSources groups={groups} />
      {result && <p role="status" className="replay-result">{t('dead.replayed', { n: formatNumber(lang, result.replayed), f: formatNumber(lang, result.failed) })}</p>}
      {openCount !== null && openCount > openShown && openShown > 0 && <p className="muted rows-cut">{t(pluralKey(lang, 'dead.moreOpen', openShown), { n: formatNumber(lang, openShown), all: formatNumber(lang, openCount) })}</p>}
      {keepClosedMs > 0 && rows.some((r) => r.status !== 'open') && <p className="muted retention">{t('dead.retention', { span: formatDuration(lang, keepClosedMs) })}</p>}
      {rows.length === 0 ? (
        <p>{t(listed === null ? 'dead.empty' : 'dead.emptyFiltered')}</p>
      ) : (
        <Table label={t('nav.deadLetters')} head={[t('dead.received'), t('dead.reason'), t('dead.topic'), t('dead.payload'), '']}>
          {rows.map((r) => (
            <Fragment key={r.id}>
              <tr data-letter={r.id} className={r.status === 'open' ? 'attention' : ''}>
                {/* When, on one line: "06/12/2026, / 08:53:38" read as two things. */}
                <td className="word received">{formatTime(lang, r.receivedMs)}</td>
                <td>
                  {/* The reason in words, the code beside it for whoever fixes the module or binding. */}
                  <ReasonWords lang={lang} reason={r.reason} />
                  <div className="small">{r.detail}</div>
                  {r.dismissed && <div className="small dismissed">{t('dead.dismissedBy', { name: r.dismissed.by, time: formatTime(lang, r.dismissed.atMs), note: r.dismissed.note })}</div>}
                  {r.status === 'replayed' && <div className="small">{t('dead.wasReplayed')}</div>}
                </td>
                <td className="mono">
                  <Topic topic={r.topic} />
                </td>
                {/* Indented when it is JSON, in a block of bounded height that scrolls (focusable, so a
                    keyboard scrolls it too); a code or a time in it kept whole ("2026-12-/06T08:44" broke
                    at its hyphen), the lines free to wrap between them. */}
                <td className="payload">
                  <pre className="mono" tabIndex={0}>
                    <KeepCodes text={prettyPayload(r.payload)} />
                  </pre>
                </td>
                <td>
                  {/* The row's buttons one under the other, apart and as wide as each other (they touched, and did not line up). */}
                  {r.status === 'open' && (mayDismiss || mayReplay) && dismissing !== r.id && (
                    <div className="letter-actions">
                      {mayDismiss && (
                        <button className="dismiss" onClick={() => (setDismissing(r.id), setNote(''), setAlike(false))}>
                          {t('dead.dismiss')}
                        </button>
                      )}
                      {mayReplay && (
                        // aria-disabled while busy, not disabled: a letter still failing keeps its button, and the keyboard focus on it.
                        <button className="replay-alike" title={t('dead.replayAlikeTitle')} aria-disabled={busy || undefined} onClick={() => void replayLetter(r.id)}>
                          {t('dead.replayAlike')}
                        </button>
                      )}
                    </div>
                  )}
                </td>
              </tr>
              {r.status === 'open' && mayDismiss && dismissing === r.id && (
                <DismissRow
                  id={r.id}
                  note={note}
                  setNote={setNote}
                  alikeListed={othersLike(r.id).length}
                  offerAlike={othersLike(r.id).length > 0 || unlisted}
                  alike={alike}
                  setAlike={setAlike}
                  busy={busy}
                  onSubmit={(e) => void submit(e, r.id)}
                  onCancel={() => cancel(r.id)}
                />
              )}
            </Fragment>
          ))}
        </Table>
      )}
    </section>
  );
}
