import type { WaitingProposal } from '../../../core/site/api.ts';
import { useApp, useT } from '../context.tsx';
import { KNOWN_ACTIONS, type MessageKey } from '../i18n/messages.ts';

/**
 * The proposals waiting for a decision about one row (a job, a resource, a stock row): one button
 * each, named by what was proposed ("Release proposed →", not a verb that reads as doing it), that
 * opens it in the inbox. Nothing when none waits.
 */
export function Waiting({ items }: { items: readonly WaitingProposal[] | undefined }) {
  const t = useT();
  const go = useApp((s) => s.go);
  const select = useApp((s) => s.select);
  const showView = useApp((s) => s.showInboxView);
  if (!items || items.length === 0) return null;
  // An action of a newer agent than this UI knows is shown as the agent named it.
  const label = (action: string) => (KNOWN_ACTIONS.has(action) ? t(`waiting.action.${action}` as MessageKey) : action);
  return (
    <>
      {items.map((w) => (
        <button
          key={w.id}
          type="button"
          className={`waiting risk-${w.risk}`}
          data-waiting={w.id}
          title={t('waiting.open', { id: w.id })}
          onClick={() => {
            // Beside the Waiting list, wherever the inbox was left: beside the Decided list it had
            // Approve there, and N went on through the decided ones.
            showView('waiting');
            go('inbox');
            void select(w.id);
          }}
        >
          {label(w.action)}
          {w.status === 'deferred' ? ` · ${t('status.deferred')}` : ''}
          {' →'}
        </button>
      ))}
    </>
  );
}

/** `items` grouped by `key` (null keys left out), in their order. */
export function waitingBy(items: readonly WaitingProposal[], key: (w: WaitingProposal) => string | null): Map<string, WaitingProposal[]> {
  const m = new Map<string, WaitingProposal[]>();
  for (const w of items) {
    const k = key(w);
    if (k === null) continue;
    const list = m.get(k);
    if (list) list.push(w);
    else m.set(k, [w]);
  }
  return m;
}
