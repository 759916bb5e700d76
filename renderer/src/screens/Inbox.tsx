import { Fragment, useEffect, useRef, useState, type ReactNode } from 'react';
import { useShallow } from 'zustand/react/shallow';
import type { ProposalDetail, TrailField } from '../../../core/site/api.ts';
import { evidenceColumns, KeepCodes, RiskBadge, Table, ValueCell } from '../components/common.tsx';
import { useApp, useT } from '../context.tsx';
import { actionName, columnHeading, formatDuration, KNOWN_ACTIONS, formatNumber, formatWhen, formatWhenFull, localizeInstants, pluralKey, proposalTexts, rolesText, writeBackText, type Lang, type MessageKey } from '../i18n/messages.ts';
import { decidedShown, selectDeferredCount, selectIsDecider, selectShownNow, selectShownYear, selectWaitingCount, sortByUrgency, yearStart } from '../store/store.ts';
import { Age } from '../components/Age.tsx';
import { AgentLooks } from './InboxAgentLooks.tsx';
import { DecidedList } from './InboxDecided.tsx';

// What the trail translates (a log event, a command state, a refusal's reason and verb); anything else is shown as it came.
const PROGRESS = new Set(['pending', 'sent', 'acknowledged', 'applied', 'failed', 'timed_out']);
const DECISION_EVENTS = new Set(['approved', 'rejected', 'deferred', 'stale', 'withdrawn']);
const REFUSALS = new Set(['unknown_user', 'disabled', 'locked', 'wrong_pin', 'no_pin', 'role']);
const VERBS = new Set(['approve', 'reject', 'defer']);
/** The trail's actor of the commands write-back sends and gives up (core/inbox markCommand): its details are the site's, not a module's. */
const WRITE_BACK = 'write-back';
// Where a typed letter is the element's own (text, a picker's type-ahead): not a shortcut. A
// focused button is not here — a letter does nothing to it, and the proposal just clicked has focus.
const TYPING_TAGS = new Set(['INPUT', 'TEXTAREA', 'SELECT']);

/**
 * The shortcut a key press means (its key in lower case), or null: pressed with Ctrl, Cmd or Alt
 * (select all, reload, bookmark…), held down (repeats), already handled, or typed into a field, a
 * picker or editable text.
 */
function shortcutKey(e: Pick<KeyboardEvent, 'key' | 'ctrlKey' | 'metaKey' | 'altKey' | 'repeat' | 'defaultPrevented' | 'target'>): string | null {
  if (e.ctrlKey || e.metaKey || e.altKey || e.repeat || e.defaultPrevented) return null;
  const target = e.target as { tagName?: unknown; isContentEditable?: unknown } | null;
  if (target && ((typeof target.tagName === 'string' && TYPING_TAGS.has(target.tagName.toUpperCase())) || target.isContentEditable === true)) return null;
  return e.key.toLowerCase();
}

/**
 * Who decided the proposal and when: the site's `decidedBy`/`decidedMs` for an approval, a
 * rejection or a stale approval; a deferral the site leaves out of those (it is not a decision the
 * proposal ends on), so its trail's latest `deferred` entry says it. Null when neither tells.
 */
export function decidedBy(p: Pick<ProposalDetail, 'status' | 'decidedBy' | 'decidedMs' | 'trail'>): { by: string; atMs: number | undefined } | null {
  if (p.decidedBy) return { by: p.decidedBy, atMs: p.decidedMs };
  if (p.status !== 'deferred') return null;
  for (let i = p.trail.length - 1; i >= 0; i--) {
    const e = p.trail[i]!;
    if (e.event === 'deferred') return e.user ? { by: e.user, atMs: e.atMs } : null;
  }
  return null;
}

// The evidence tables' column order (key first, sequence columns last) is components/common.tsx's:
// History shows a table's columns in the same order. Still exported from here, as it was.
export { evidenceColumns };

/** What of the page `keepPlaceAfterDecision` uses (a fake one in the unit test). */
export type FocusDocument = Pick<Document, 'activeElement' | 'body' | 'querySelector' | 'querySelectorAll'>;

/**
 * After a decision made here that left the open proposal undecidable (approved, rejected, stale),
 * its decision buttons are gone (Next, further down, stays while another is listed) and, with the
 * decided row leaving the list, the keyboard focus fell to the page: it goes to the row after the
 * decided one (Enter opens it, N and Next open the same one), else to the list. A focus the
 * person put elsewhere meanwhile (a field, the language picker) stays.
 * After a deferral that took the panel on to the next open proposal (`deferred`), a focus on the
 * deferred one's row (D pressed there; the row moved to the list's end, off the window, and Enter
 * reopened the deferred one) or on the page goes to the row of the one the panel shows; on the
 * Defer button, or anywhere else, it stays.
 */
export function keepPlaceAfterDecision(
  doc: FocusDocument,
  after: { decided: string; next: string | null; deferred?: true } | null,
  selected: { id: string; status: string } | null,
): void {
  if (after?.deferred) {
    if (selected === null || selected.id !== after.next || selected.id === after.decided) return;
    const active = doc.activeElement;
    if (active !== null && active !== doc.body && active.getAttribute('data-proposal') !== after.decided) return;
    const rows = doc.querySelectorAll<HTMLElement>('.inbox-list [data-proposal]');
    for (let i = 0; i < rows.length; i++) {
      if (rows[i]!.getAttribute('data-proposal') === after.next) return rows[i]!.focus();
    }
    return;
  }
  // `selected` null: the proposal was gone when decided (`proposal.notFound`), its panel closed.
  if (!after || (selected !== null && (selected.id !== after.decided || selected.status === 'open' || selected.status === 'deferred'))) return;
  if (doc.activeElement !== null && doc.activeElement !== doc.body) return;
  const rows = doc.querySelectorAll<HTMLElement>('.inbox-list [data-proposal]');
  for (let i = 0; i < rows.length; i++) {
    if (rows[i]!.getAttribute('data-proposal') === after.next) return rows[i]!.focus();
  }
  doc.querySelector<HTMLElement>('.inbox-list')?.focus();
}

/** What of an element's place `placeOnOpen` reads (its getBoundingClientRect). */
export type Box = Pick<DOMRect, 'top' | 'bottom' | 'left' | 'right'>;

/**
 * What to scroll when a proposal is opened (a click, N, Next, the one after a deferral): 'row'
 * (its row in the list, to the nearest edge), 'top' (the page to its top), 'panel', or nothing.
 * `list` and `row` are null when not on the page (a row the list no longer holds); `scrollY` is
 * how far the page is scrolled.
 * - Beside the list (from 1101 px wide) the panel is sticky and stays in view: the row is what
 *   moves. N walked the highlight off the window (row top 868 → 3113 in an 800 px window) and the
 *   person lost their place; it is brought in only when not wholly in view, so a click on a
 *   visible row (or N to the one under it) scrolls nothing and the header stays. A row the page's
 *   top shows (N wrapped round to the first) takes the page to its top, the header and navigation
 *   with it, rather than to the window's edge.
 * - One column (under 1101 px: the list, then the panel below it) both cannot be in view: the
 *   panel is, it is what N and a tap open (its heading, status and buttons), and its "Back to the
 *   list" leads back to the row. Its top already in the upper third of the window: left where it
 *   is ('nearest' scrolled a panel taller than the window to its top, the header away).
 */
export function placeOnOpen(panel: Box, list: Box | null, row: Box | null, windowHeight: number, scrollY = 0): 'row' | 'top' | 'panel' | null {
  if (list && row && panel.left >= list.right) return row.top >= 0 && row.bottom <= windowHeight ? null : row.bottom + scrollY <= windowHeight ? 'top' : 'row';
  return panel.top >= 0 && panel.top < windowHeight / 3 ? null : 'panel';
}

/** A point in time in the panel: the list's short form (`formatWhen`), in full to the second on hover. */
function When({ lang, ms, now }: { lang: Lang; ms: number | null | undefined; now: number }) {
  if (ms === null || ms === undefined) return <>–</>;
  return (
    <time dateTime={new Date(ms).toISOString()} title={formatWhenFull(lang, ms)}>
      {formatWhen(lang, ms, now)}
    </time>
  );
}

/** "As the agent read it at Sun 6 Dec, 05:12, 7 mins ago": its age on the site's clock, the one line of the panel that ticks. */
function ReadAt({ createdMs }: { createdMs: number }) {
  const t = useT();
  const lang = useApp((s) => s.lang);
  const now = useApp(selectShownNow) ?? Date.now();
  return <p className="muted read-at">{t('detail.readAt', { time: formatWhen(lang, createdMs, now), age: formatDuration(lang, Math.max(0, now - createdMs)) })}</p>;
}

export function Inbox() {
  const t = useT();
  const lang = useApp((s) => s.lang);
  const proposals = useApp(useShallow((s) => sortByUrgency(s.proposals)));
  const selected = useApp((s) => s.selected);
  const select = useApp((s) => s.select);
  // What waits, open and deferred as the list shows them; more than listed: a long inbox lists the most urgent.
  const waiting = useApp(selectWaitingCount);
  const deferred = useApp(selectDeferredCount);
  // The site's clock to the year only (which year is "this year" for a point in time): the ages,
  // which move each second while the site is quiet, are `Age`'s, so the list does not render again
  // each second. (Not Date.now() in a selector: it changes on every call, a render loop.)
  const now = useApp(selectShownYear) ?? yearStart(Date.now());
  const afterDecision = useApp((s) => s.afterDecision);
  const view = useApp((s) => s.inboxView);
  const showView = useApp((s) => s.showInboxView);
  // The Decided list's rows as shown (the withdrawn ones only on request).
  const decidedCount = useApp((s) => decidedShown(s.decided, s.showWithdrawn).length);
  // Runs once the decided proposal's panel and the reloaded list are on the page, and again when
  // the panel's proposal changes after. The decision's own read of the proposal can lose to the
  // live event's read of it (the site announces the change the decision made, `applyEvent`): the
  // store's `decide` waits for that read before it sets afterDecision, and this effect also runs
  // when the panel's proposal or its status changes, so a panel that shows the decision later
  // still moves the focus on (it fell to the page for good, intermittently in floor-ui.e2e under
  // CI). keepPlaceAfterDecision acts only while the focus is on the page and the decided proposal
  // is shown decided.
  const selectedStatus = selected?.status;
  useEffect(() => {
    if (typeof document !== 'undefined') keepPlaceAfterDecision(document, afterDecision, selected);
  }, [afterDecision, selected?.id, selectedStatus]);
  return (
    <div className="inbox">
      {/* tabIndex -1: the focus can be put here (an emptied list after a decision), Tab does not stop here. */}
      <section className="inbox-list" aria-label={t('nav.inbox')} tabIndex={-1}>
        {/* What waits, or what was decided lately (approved and rejected ones leave the waiting
            list at once). A toggle here, not a navigation entry: the navigation keeps one row at
            1024 px in German. */}
        <div className="inbox-views" role="group" aria-label={t('nav.inbox')}>
          <button aria-pressed={view === 'waiting'} onClick={() => showView('waiting')}>
            {t('inbox.showWaiting')} ({formatNumber(lang, waiting)})
          </button>
          <button aria-pressed={view === 'decided'} onClick={() => showView('decided')}>
            {t('inbox.showDecided')}
          </button>
        </div>
        {view === 'decided' ? (
          <DecidedList now={now} />
        ) : (
          <>
            {/* tabIndex -1: the focus is put here after sign-in (App), so Tab goes on to the first row. */}
            <h2 tabIndex={-1}>
              {proposals.length === 0
                ? t('inbox.empty')
                : deferred > 0
                  ? t(pluralKey(lang, 'inbox.waitingDeferred', waiting), { n: formatNumber(lang, waiting), d: formatNumber(lang, deferred) })
                  : t(pluralKey(lang, 'inbox.waiting', waiting), { n: formatNumber(lang, waiting) })}
            </h2>
            {/* Nothing waits (before the agent's first run too): how often it looks and when it last
                did, so an empty list reads as "nothing to decide now", not as an agent that does not run. */}
            {proposals.length === 0 && <AgentLooks />}
            {waiting > proposals.length && proposals.length > 0 && (
              <p className="muted rows-cut">{t('inbox.mostUrgent', { n: formatNumber(lang, proposals.length), all: formatNumber(lang, waiting) })}</p>
            )}
            {proposals.length > 0 && (
              <Table label={t('nav.inbox')} head={[t('inbox.risk'), t('inbox.action'), t('inbox.age'), t('inbox.status')]}>
                {proposals.map((p) => (
                  // A deferred one is listed below the open ones (sortByUrgency), greyed: put aside, still waiting.
                  <tr key={p.id} className={[selected?.id === p.id ? 'selected' : '', p.status === 'deferred' ? 'deferred' : ''].filter((c) => c !== '').join(' ')}>
                    <td>
                      <RiskBadge risk={p.risk} />
                    </td>
                    <td>
                      <button className="link" onClick={() => void select(p.id)} data-proposal={p.id}>
                        {/* A code stays whole: "ITEM-/017" broke at its hyphen at 1024 px in German. */}
                        <KeepCodes text={proposalTexts(lang, p, now).explanation} />
                      </button>
                      {p.failedBeforeCount ? <span className="failed-tag chip-alert"> ⚠ {t('inbox.failedBefore', { n: formatNumber(lang, p.failedBeforeCount) })}</span> : null}
                    </td>
                    <td>
                      <Age fromMs={p.createdMs} />
                    </td>
                    <td>{t(`status.${p.status}`)}</td>
                  </tr>
                ))}
              </Table>
            )}
          </>
        )}
      </section>
      {selected ? <ProposalPanel /> : <PickHint decided={view === 'decided'} any={view === 'decided' ? decidedCount > 0 : proposals.length > 0} />}
    </div>
  );
}

/**
 * Where the panel goes before a proposal is picked (`any`: the list shown has one to pick): at 1280 px the right half stood empty. A hint,
 * not the most urgent one opened by itself: opened unasked, the panel would change under the
 * person as the live list changes, and a decision key (A) would decide a proposal they never
 * picked. N opens the most urgent, as Next does from an open one.
 */
function PickHint({ decided, any }: { decided: boolean; any: boolean }) {
  const t = useT();
  const next = useApp((s) => s.selectNext);
  const active = any && !decided;
  useEffect(() => {
    if (!active) return;
    const onKey = (e: KeyboardEvent) => {
      if (shortcutKey(e) === 'n') void next();
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [active, next]);
  // Nothing to pick: the list's heading says so ("Nothing waits…", "Nothing decided yet").
  if (!any) return null;
  return (
    <section className="pick-hint" aria-label={t(decided ? 'inbox.pickDecided' : 'inbox.pick')}>
      <p className="muted">{t(decided ? 'inbox.pickDecided' : 'inbox.pick')}</p>
      {active && (
        <div className="next-only">
          <button onClick={() => void next()}>{t('inbox.openMostUrgent')} →</button>
        </div>
      )}
    </section>
  );
}

function ProposalPanel() {
  const t = useT();
  const lang = useApp((s) => s.lang);
  const p = useApp((s) => s.selected)!;
  const outcome = useApp((s) => s.lastOutcome);
  const decide = useApp((s) => s.decide);
  const next = useApp((s) => s.selectNext);
  const canDecide = useApp(selectIsDecider);
  const user = useApp((s) => s.user);
  // Whether Next has anywhere to go: another proposal in the list shown (the Decided list's own in that view).
  const another = useApp((s) => (s.inboxView === 'decided' ? decidedShown(s.decided, s.showWithdrawn) : s.proposals).some((x) => x.id !== s.selected?.id));
  // A decision on its way: not sent again (a double tap, a key held down).
  const deciding = useApp((s) => s.deciding);
  // Or another proposal on its way to this panel (a row tapped, N): these buttons are the last one's.
  const opening = useApp((s) => s.opening !== null && s.opening !== s.selected?.id);
  const held = deciding || opening;
  // The file of the rule that made it, when the site runs that rule at that version from a rule file of its own.
  const ruleFile = useApp((s) => s.status?.agentRules?.find((r) => r.id === p.ruleId && r.version === p.ruleVersion)?.file);
  const [comment, setComment] = useState('');
  const decidable = canDecide && (p.status === 'open' || p.status === 'deferred');
  useEffect(() => setComment(''), [p.id]);
  // A comment goes with one decision: once the site took it, the field empties (what was typed
  // since stays). A deferral of the only open proposal leaves it on the panel, and the approval
  // made there later went out with the deferral's comment as its own. Refused, it stays.
  const send = async (decision: 'approve' | 'reject' | 'defer') => {
    const sent = comment;
    if (await decide(decision, sent)) setComment((now) => (now === sent ? '' : now));
  };
  // The proposal just opened, and where it is in the list, kept in view (`placeOnOpen`): beside
  // the list its row, below it (under 1101 px) the panel. A block body: newer chromium's
  // scrollIntoView returns a promise, which React would take for the effect's cleanup and call,
  // taking the whole page down.
  const panel = useRef<HTMLElement>(null);
  useEffect(() => {
    const el = panel.current;
    if (!el) return;
    // Beside the list the panel scrolls within itself: another proposal opens at its top (its
    // heading, status and buttons), not at the offset where the last one's trail was read.
    el.scrollTop = 0;
    const list = document.querySelector<HTMLElement>('.inbox-list');
    const row = document.querySelector<HTMLElement>('.inbox-list tr.selected');
    const place = placeOnOpen(el.getBoundingClientRect(), list?.getBoundingClientRect() ?? null, row?.getBoundingClientRect() ?? null, window.innerHeight, window.scrollY);
    if (place === 'row') row!.scrollIntoView({ block: 'nearest' });
    else if (place === 'top') window.scrollTo({ top: 0 });
    else if (place === 'panel') el.scrollIntoView({ block: 'nearest' });
  }, [p.id]);
  // Under 1101 px the panel stands below the list, its top at the window's: the way back to the
  // proposal's row (kept selected), its link focused so N and Enter go on from there. One decided
  // here has left the list: the way back is to the row that followed it, where the focus went
  // (`keepPlaceAfterDecision`) and where N goes on — the whole list centred was row 100 of 200,
  // 7,000 px from the lead's place. With neither, the list's top.
  const afterDecision = useApp((s) => s.afterDecision);
  const backToList = () => {
    const following = afterDecision && afterDecision.decided === p.id && afterDecision.next !== null ? afterDecision.next : null;
    const link =
      document.querySelector<HTMLElement>('.inbox-list tr.selected button.link') ??
      (following === null ? null : ([...document.querySelectorAll<HTMLElement>('.inbox-list button[data-proposal]')].find((b) => b.dataset.proposal === following) ?? null));
    const row = link?.closest<HTMLElement>('tr') ?? null;
    if (row) row.scrollIntoView({ block: 'center' });
    else document.querySelector<HTMLElement>('.inbox-list')?.scrollIntoView({ block: 'start' });
    (link ?? document.querySelector<HTMLElement>('.inbox-list'))?.focus({ preventScroll: true });
  };
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const k = shortcutKey(e);
      if (k === 'n') void next();
      if (!decidable || held) return;
      if (k === 'a') void send('approve');
      else if (k === 'r') void send('reject');
      else if (k === 'd') void send('defer');
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [decidable, held, comment, decide, next]);
  const module = p.module ?? (p.params.module as string | undefined) ?? p.command?.module ?? '';
  // A log event in the chosen language; one this screen does not know is shown as it came.
  const trailEvent = (ev: string): string => {
    if (ev.startsWith('command_')) {
      const state = ev.slice('command_'.length);
      return t('trail.command', { progress: PROGRESS.has(state) ? t(`progress.${state}` as MessageKey) : state });
    }
    if (DECISION_EVENTS.has(ev)) return t(`status.${ev}` as MessageKey);
    return ev === 'proposed' || ev === 'refused' ? t(`trail.${ev}`) : ev;
  };
  // The site's clock to the year, for the points in time (`formatWhen`); the one age here, "… ago",
  // is ReadAt's, which follows the site's clock (a status every few seconds, each second while it is quiet).
  const now = useApp(selectShownYear) ?? yearStart(Date.now());
  const texts = proposalTexts(lang, p, now);
  const decider = decidedBy(p);
  // A refusal's reason, the decision it refused and a proposal's action are codes: said in words
  // (an action this UI does not know as data); a withdrawal's or a stale approval's reason is the
  // proposal's own, said in the chosen language; what a module said of its command (the ack's
  // result, JSON, or its error; `state` repeats it) is data, as it came; write-back's own detail
  // (not applied, not sent in time) in words from its code, the site's English for one this UI
  // does not know; the rest is text.
  const trailValue = (ev: string, user: string | undefined, f: TrailField): ReactNode => {
    const { name: field, value: v } = f;
    if (ev === 'refused' && field === 'reason' && REFUSALS.has(v)) return t(`trail.refusal.${v}` as MessageKey);
    if (ev === 'refused' && field === 'decision' && VERBS.has(v)) return t(`detail.${v}` as MessageKey);
    if (ev === 'proposed' && field === 'action') return KNOWN_ACTIONS.has(v) ? actionName(lang, v) : <code>{v}</code>;
    if (ev === 'withdrawn' && field === 'reason' && v === p.withdrawnReason) return texts.withdrawnReason!;
    if (ev === 'stale' && field === 'reason' && v === p.staleReason) return texts.staleReason!;
    // An approval learnt of from the module's ack after a restore (core/inbox APPROVER_NOT_ON_RECORD, "?"): the site's English says what "?" means.
    if (ev === 'approved' && user === '?' && field === 'reason') return t('trail.approvalNotOnRecord');
    if (ev.startsWith('command_') && field === 'detail' && user !== WRITE_BACK) return <code>{v}</code>;
    if (ev.startsWith('command_') && field === 'detail' && f.code) return writeBackText(lang, f);
    return localizeInstants(lang, v, now);
  };
  // Who made the entry: a person by name; the agent in words; the agent's run (`agent-<run id>`),
  // a command's sender (`write-back`), the module that answered and `state` (the tables showed the
  // command's effect) as data — codes this UI has no words for ("kommando: utført (state)").
  const trailActor = (ev: string, user: string): ReactNode => {
    // Only on the agent's own entries: a person may be named `agent` (their decision read as the agent's).
    if (user === 'agent' && (ev === 'proposed' || ev === 'withdrawn')) return t('inbox.agent');
    if (ev.startsWith('command_') || ((ev === 'proposed' || ev === 'withdrawn') && user.startsWith('agent-'))) return <code>{user}</code>;
    return user;
  };
  return (
    <section className="proposal" ref={panel} aria-label={texts.explanation} aria-busy={opening || undefined}>
      {/* Shown only in one column (styles.css): beside the list the row is in view already. */}
      <button className="link back-to-list" onClick={backToList}>
        ↑ {t('detail.backToList')}
      </button>
      <h2 title={p.explanation}>
        <RiskBadge risk={p.risk} /> {texts.explanation}
      </h2>
      {/* The numbers in the explanation are as the agent read them when it proposed (core/inbox: a
          situation's proposal is made once, not rewritten while it waits): said with when, so a
          lead who finds other numbers on the Stock screen minutes later knows which is older. */}
      <ReadAt createdMs={p.createdMs} />
      <p className="muted" title={p.riskReason}>
        {texts.riskReason}
      </p>
      <p>
        <strong>{t('inbox.status')}:</strong> {t(`status.${p.status}`)}
        {/* In the list's form ("Sun 6 Dec, 08:40"), to the second on hover: the panel read
            "06/12/2026, 08:40:27" beside it, German "06.12.26, 08:42:08". */}
        {decider ? (
          <>
            {` — ${decider.by}, `}
            <When lang={lang} ms={decider.atMs} now={now} />
          </>
        ) : null}
        {/* Nobody decided a withdrawn one: the agent withdrew it, then. */}
        {p.status === 'withdrawn' && p.withdrawnMs !== undefined ? (
          <>
            {` — ${t('inbox.agent')}, `}
            <When lang={lang} ms={p.withdrawnMs} now={now} />
          </>
        ) : null}
      </p>
      {p.status === 'stale' || outcome?.outcome === 'stale' ? (
        <p role="alert" className="alert">
          ⚠ {t('detail.stale', { reason: texts.staleReason ?? outcome?.reason ?? '' })}
        </p>
      ) : null}
      {p.status === 'withdrawn' && texts.withdrawnReason !== undefined && <p className="withdrawn">{t('detail.withdrawn', { reason: texts.withdrawnReason })}</p>}
      {p.failedBefore.length > 0 && (
        <div className="failed-before alert" role="note">
          <p>⚠ {t('detail.failedBefore', { n: formatNumber(lang, p.failedBefore.length) })}</p>
          <ul>
            {p.failedBefore.map((f) => (
              <li key={f.id}>
                {/* What the module said as data, as the trail shows it; write-back's own detail (never sent) in words. */}
                <When lang={lang} ms={f.atMs} now={now} /> — {f.id}: {f.detail === null ? t('detail.failedNoReason') : f.code ? writeBackText(lang, { ...f, value: f.detail }) : <code>{f.detail}</code>}
              </li>
            ))}
          </ul>
        </div>
      )}
      {p.command && (
        <p className={`command command-${p.command.progress}`}>
          {t('detail.command', { progress: t(`progress.${p.command.progress}`) })}
        </p>
      )}
      {/* What to do comes before what the agent saw: on the floor PC's 1366 × 768 screen the
          evidence tables pushed Approve below the fold (the decision is why the panel is open). */}
      {decidable && (
        <>
          {/* A notice (no module: a rule of the site's own that only tells, door-down) sends nothing:
              "Approving sends … to ." named no one and contradicted its risk reason. */}
          <p className="will-send">{module === '' ? t('detail.willSendNothing') : t(KNOWN_ACTIONS.has(p.action) ? 'detail.willSend' : 'detail.willSendUnnamed', { action: actionName(lang, p.action), command: p.action, module })}</p>
          <label>
            {t('detail.comment')}
            <textarea name="comment" value={comment} onChange={(e) => setComment(e.target.value)} rows={2} />
          </label>
          {/* aria-disabled, not disabled, while a decision is on its way: a disabled button loses
              the keyboard focus to the page, and whoever works from the keys loses their place.
              A click or Enter on one then sends nothing (the store's decide returns while
              `deciding`), nor while another proposal is on its way here (`opening`). */}
          <div className="actions">
            <button className="primary approve" aria-disabled={held || undefined} onClick={() => void send('approve')}>
              ✔ {t('detail.approve')}
            </button>
            <button className="reject" aria-disabled={held || undefined} onClick={() => void send('reject')}>
              ✖ {t('detail.reject')}
            </button>
            <button aria-disabled={held || undefined} onClick={() => void send('defer')}>
              ‖ {t('detail.defer')}
            </button>
            <button onClick={() => void next()}>{t('detail.next')} →</button>
          </div>
          <p className="muted small">{t('detail.shortcuts')}</p>
        </>
      )}
      {/* Someone who may not decide is told why there are no buttons (and why A does nothing). */}
      {!canDecide && user && (p.status === 'open' || p.status === 'deferred') && (
        <p className="not-decider" role="note">
          {t('detail.notDecider', { name: user.name, role: rolesText(lang, user.roles) })}
        </p>
      )}
      {/* Without the decision buttons (decided here or elsewhere, or nobody here may decide), Next
          stays: on a touch screen it is the way on, the list beside it having changed. */}
      {!decidable && another && (
        <div className="next-only">
          <button onClick={() => void next()}>{t('detail.next')} →</button>
        </div>
      )}
      <h3>{t('detail.evidence')}</h3>
      {p.evidence.map((ev) => (
        <div key={ev.table} className="evidence">
          <p className="muted">
            {ev.table}: {ev.snapshotId === null ? t('detail.noSnapshot') : t('detail.snapshot', { id: ev.snapshotId, tag: ev.tag ?? '–' })}
          </p>
          {ev.rows.length > 0 && (
            <EvidenceRows lang={lang} label={ev.table} rows={ev.rows} types={ev.types} columns={evidenceColumns(ev.rows, ev.keyColumns, ev.sequenceColumns)} />
          )}
        </div>
      ))}
      {/* An approval's compare-and-set read the tables again: that state, as the site's
          evidence report gives it (the rows cited, read at the checked tag, and whether they are
          the ones the agent read; the problem, in English, as a title). */}
      {p.checked && p.checked.length > 0 && (
        <>
          <h3>{t(p.status === 'stale' ? 'detail.checkedStale' : 'detail.checked')}</h3>
          {p.checked.map((c) => (
            <div key={c.table} className="checked" data-table={c.table}>
              <p className="muted" title={c.problem}>
                {c.table}: {c.snapshotId === null ? t('detail.noSnapshot') : t('detail.snapshot', { id: c.snapshotId, tag: c.tag })}
                {c.snapshotId !== null && !c.tagExists ? ` — ${t('detail.checkedTagGone')}` : ''}
              </p>
              {/* Compared without the sequence columns (core/inbox evidence.ts): a module's
                  sequence number alone moving is said as such, not as a change. */}
              {c.matchesEvidence !== null && (
                <p className={c.matchesEvidence ? 'checked-same' : 'checked-changed'}>
                  {c.matchesEvidence
                    ? t(c.sequenceMoved ? 'detail.checkedSameSequence' : 'detail.checkedSame')
                    : c.changedColumns && c.changedColumns.length > 0
                      ? t('detail.checkedChangedColumns', { columns: c.changedColumns.map((column) => columnHeading(lang, c.table, column).text).join(', ') })
                      : t('detail.checkedChanged')}
                </p>
              )}
              {c.matchesEvidence === false && c.rows.length > 0 && (
                // Every row's columns (a row gone at the tag comes as its key alone), the changed ones after the key, their cells marked.
                <EvidenceRows lang={lang} label={c.table} rows={c.rows} types={c.types} columns={evidenceColumns(c.rows, c.keyColumns, c.sequenceColumns, c.changedColumns)} changed={c.changedCells} />
              )}
            </div>
          ))}
        </>
      )}
      <p className="muted">
        {t('detail.rule', { id: p.ruleId, version: p.ruleVersion })}
        {/* A rule of the site's own (config agent.ruleFiles): said, so a shift lead knows the
            proposal comes from this site's rule, not one Tilstand ships (status.agentRules). */}
        {ruleFile !== undefined && ` — ${t('detail.ruleFile', { path: ruleFile.path })}`}
      </p>
      <h3>{t('detail.trail')}</h3>
      <ol className="trail">
        {p.trail.map((e, i) => (
          <li key={i}>
            {/* To the minute, as the list: the order is the trail's; two events in one minute (sent,
                then applied) are told apart by the seconds on hover. */}
            <When lang={lang} ms={e.atMs} now={now} /> — {trailEvent(e.event)}
            {e.user ? <> ({trailActor(e.event, e.user)})</> : ''}
            {e.fields
              ? e.fields.map((f, j) => (
                  <Fragment key={j}>
                    {j === 0 ? ': ' : '; '}
                    {t(`trail.field.${f.name}` as MessageKey)}: {trailValue(e.event, e.user, f)}
                  </Fragment>
                ))
              : e.detail
                ? `: ${localizeInstants(lang, e.detail, now)}`
                : ''}
          </li>
        ))}
      </ol>
    </section>
  );
}

/**
 * Evidence rows of table `label` as a table in `columns`' order, each headed in words with its
 * stored name on hover (`columnHeading`); `changed[i]` names the cells of row i to mark. Each
 * value as History shows it (components' `ValueCell`): a status or state of Tilstand's own tables
 * in words, the stored value on hover; each code in a value kept whole (`KeepCodes`), in a
 * sentence too ("material short: ITEM-003"), which `td.code`, for a value without a space, missed.
 */
function EvidenceRows({ lang, label, rows, types, columns, changed }: { lang: Lang; label: string; rows: readonly Record<string, unknown>[]; types: Record<string, string>; columns: string[]; changed?: readonly (readonly string[])[] }) {
  const heads = columns.map((c) => columnHeading(lang, label, c));
  return (
    <Table label={label} head={heads.map((h) => h.text)} titles={heads.map((h) => h.stored)}>
      {rows.map((r, i) => (
        <tr key={i}>
          {columns.map((column) => (
            <ValueCell key={column} lang={lang} table={label} column={column} type={types[column]} value={column in r ? r[column] : null} codes className={changed?.[i]?.includes(column) ? 'changed' : undefined} />
          ))}
        </tr>
      ))}
    </Table>
  );
}
