// The inbox's Decided list: what was approved, rejected or found stale lately, the newest decision
// first, with who decided it and when and how far its command got. Approved and rejected proposals
// leave the waiting list at once; without this a shift lead asking "what did we approve this shift,
// and was it carried out?" needed the CLI (`tilstand proposals --status approved`). Withdrawn ones
// too, by when the agent withdrew them, with why: a proposal the agent withdrew (its reason gone)
// left the waiting list with nobody deciding, and a lead who saw it a minute before found it
// nowhere. A row opens the same panel as a waiting one (its trail, what the approval was checked
// against, why it was withdrawn).
import type { ProposalView } from '../../../core/site/api.ts';
import { Table } from '../components/common.tsx';
import { useApp, useT } from '../context.tsx';
import { actionName, formatNumber, formatWhen, proposalTexts } from '../i18n/messages.ts';
import { DECIDED_ROWS } from '../store/store.ts';

const NONE: ProposalView[] = [];

export function DecidedList({ now }: { now: number }) {
  const t = useT();
  const lang = useApp((s) => s.lang);
  // null until the site answered: the heading alone meanwhile, not "nothing decided".
  const asked = useApp((s) => s.decided);
  const decided = asked ?? NONE;
  const selected = useApp((s) => s.selected?.id ?? null);
  const select = useApp((s) => s.select);
  return (
    <>
      <h2>{asked !== null && decided.length === 0 ? t('inbox.decidedNone') : t('inbox.decidedHeading')}</h2>
      {/* The decided ones' cut (the withdrawn ones have their own, WITHDRAWN_ROWS). */}
      {decided.filter((p) => p.status !== 'withdrawn').length >= DECIDED_ROWS && <p className="muted rows-cut">{t('inbox.decidedCut', { n: formatNumber(lang, DECIDED_ROWS) })}</p>}
      {decided.length > 0 && (
        <Table label={t('inbox.showDecided')} head={[t('inbox.decidedAt'), t('inbox.action'), t('inbox.decision'), t('inbox.decidedBy'), t('inbox.command')]}>
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
                    {texts.explanation}
                  </button>
                  <div className="muted small">{actionName(lang, p.action)}</div>
                  {/* Here, not in the decision's column: that one does not wrap, a reason is a sentence. */}
                  {withdrawn && texts.withdrawnReason !== undefined && <div className="small withdrawn">{t('detail.withdrawn', { reason: texts.withdrawnReason })}</div>}
                </td>
                <td className="word">{t(`status.${p.status}`)}</td>
                <td>{withdrawn ? t('inbox.agent') : (p.decidedBy ?? '–')}</td>
                {/* A rejection sends nothing, nor does a notice's approval: no command. */}
                <td className={p.command ? `word command-${p.command.progress}` : 'word'}>{p.command ? t(`progress.${p.command.progress}`) : '–'}</td>
              </tr>
            );
          })}
        </Table>
      )}
    </>
  );
}
