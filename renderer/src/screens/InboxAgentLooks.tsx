// The empty waiting list's line about the agent: how often it looks (config.json
// `agent.intervalMs`, as the site's status carries it) and when it last did, so an empty inbox
// reads as "nothing to decide now" and a shift lead sees the agent is alive — not as an agent that
// stopped. A run with nothing new commits nothing, so the inbox's own last commit could not say it.
import { useApp, useT } from '../context.tsx';
import { formatDuration, formatWhen } from '../i18n/messages.ts';
import { selectShownNow } from '../store/store.ts';

/**
 * "The agent looks every 1 min; last at Sun 6 Dec, 05:12, 40 sec ago." — the interval alone
 * before its first run since the site started, and plainly that it does not run on its own on a
 * site started without its timers. Nothing until the site's status says (an older site's status
 * does not carry the agent: better no line than a wrong interval). Its age on the site's clock, as
 * the list's ages (a status comes every few seconds, and the age follows it).
 */
export function AgentLooks() {
  const t = useT();
  const lang = useApp((s) => s.lang);
  // Its own clock (not the inbox's): the age it shows ticks without rendering the inbox again.
  const now = useApp(selectShownNow) ?? Date.now();
  const agent = useApp((s) => s.status?.agent);
  if (!agent) return null;
  const last = agent.lastRunMs === null ? null : { time: formatWhen(lang, agent.lastRunMs, now), age: formatDuration(lang, Math.max(0, now - agent.lastRunMs)) };
  const text = !agent.timer
    ? t(last ? 'inbox.agentOffLast' : 'inbox.agentOff', last ?? {})
    : last
      ? t('inbox.agentLooks', { interval: formatDuration(lang, agent.intervalMs), ...last })
      : t('inbox.agentLooksNotYet', { interval: formatDuration(lang, agent.intervalMs) });
  return <p className="muted agent-looks">{text}</p>;
}
