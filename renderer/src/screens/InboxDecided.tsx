// The inbox's Decided list: what was approved, rejected or found stale lately, the newest decision
// first, with who decided it and when and how far its command got. Approved and rejected proposals
// leave the waiting list at once; without this a shift lead asking "what did we approve this shift,
// and was it carried out?" needed the CLI (`tilstand proposals --status approved`). Withdrawn ones
// too, by when the agent withdrew them, with why: a proposal the agent withdrew (its reason gone)
// left the waiting list with nobody deciding, and a lead who saw it a minute before found it
// nowhere. Those only on request (`showWithdrawn`, a box at the list's top saying how many): a busy
// floor's withdrawals, several a minute, buried the lead's own decisions thousands of pixels down.
// A row opens the same panel as a waiting one (its trail, what the approval was checked against,
// why it was withdrawn). Three columns, not five: beside the panel at 1280 px the proposal's column
// was 110–145 px, an explanation 8–10 lines, and German cut the last column.
import type { ProposalView } from '../../../core/site/api.ts';
import { KeepCodes, Table } from '../components/common.tsx';
import { useApp, useT } from '../context.tsx';
import { actionName, formatNumber, formatWhen, proposalTexts } from '../i18n/messages.ts';
import { DECIDED_ROWS, decidedShown, WITHDRAWN_ROWS } from '../store/store.ts';

const NONE: ProposalView[] = [];

export function DecidedList({ now }: { now: number }) {
  const t = useT();
  const lang = useApp((s) => s.lang);
  // null until the site answered: the heading alone meanwhile, not "nothing decided".
  const asked = useApp((s) => s.decided);
  const all = asked ?? NONE;
  const showWithdrawn = useApp((s) => s.showWithdrawn);
  const setShowWithdrawn = useApp((s) => s.setShowWithdrawn);
  const decided = decidedShown(all, showWithdrawn);
  const withdrawnCount = all.filter((p) => p.status === 'withdrawn').length;
  const selected = useApp((s) => s.selected?.id ?? null);
  const select = useApp((s) => s.select);
  const heading = showWithdrawn ? (decided.length === 0 ? 'inbox.decidedNone' : 'inbox.decidedHeading') : decided.length === 0 ? 'inbox.decidedOnlyNone' : 'inbox.decidedOnlyHeading';
  return (
    <>
      <h2>{asked !== null ? t(heading) : t(showWithdrawn ? 'inbox.decidedHeading' : 'inbox.decidedOnlyHeading')}</h2>
      {/* At the top, with how many: a lead looking for a proposal that vanished from the waiting
          list finds the way at once. "50+" at their cut: more may have been withdrawn. */}
      {asked !== null && (
        <label className="filter">
          <input name="withdrawn" type="checkbox" checked={showWithdrawn} onChange={(e) => setShowWithdrawn(e.target.checked)} />{' '}
          {t('inbox.showWithdrawn', { n: `${formatNumber(lang, withdrawnCount)}${withdrawnCount >= WITHDRAWN_ROWS ? '+' : ''}` })}
        </label>
      )}
      {/* The decided ones' cut (the withdrawn ones have their own, WITHDRAWN_ROWS). */}
      {all.filter((p) => p.status !== 'withdrawn').length >= DECIDED_ROWS && <p className="muted rows-cut">{t('inbox.decidedCut', { n: formatNumber(lang, DECIDED_ROWS) })}</p>}
      {decided.length > 0 && (
        <Table label={t('inbox.showDecided')} head={[t('inbox.decidedAt'), t('inbox.action'), t('inbox.outcome')]}>
          {decided.map((p) => {
            const texts = proposalTexts(lang, p, now);
            const withdrawn = p.status === 'withdrawn';
            return (
              <tr key={p.id} className={selected === p.id ? 'selected' : undefined} data-status={p.status}>
                <td>
                  {/* A withdrawn one: when the agent withdrew it (the site lists it by that time). */}
                  <span className="when">{formatWhen(lang, (withdrawn ? p.withdrawnMs : p.decidedMs) ?? null, now)}</span>
                </td>
                <td>
                  {/* data-decided, not data-proposal: what follows the waiting rows (a decision's focus, the e2e steps) does not take these for them. */}
                  <button className="link" onClick={() => void select(p.id)} data-decided={p.id}>
                    <KeepCodes text={texts.explanation} />
                  </button>
                  <div className="muted small">{actionName(lang, p.action)}</div>
                  {/* Here, under the explanation: a reason is a sentence, the outcome column is narrow. */}
                  {withdrawn && texts.withdrawnReason !== undefined && (
                    <div className="small withdrawn">
                      <KeepCodes text={t('detail.withdrawn', { reason: texts.withdrawnReason })} />
                    </div>
                  )}
                </td>
                {/* The decision, who, and how far its command got, stacked: one column, not three. */}
                <td className="outcome">
                  <div className="word">{t(`status.${p.status}`)}</div>
                  <div className="muted small">{withdrawn ? t('inbox.agent') : (p.decidedBy ?? '–')}</div>
                  {/* A rejection, a withdrawal, a notice's approval: no command, no line. */}
                  {p.command && <div className={`small command-${p.command.progress}`}>{t(`progress.${p.command.progress}`)}</div>}
                </td>
              </tr>
            );
          })}
        </Table>
      )}
    </>
  );
}
