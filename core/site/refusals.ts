// What the site says about the embedded broker's refusals (core/ingest/broker.ts `refusals`): a
// log line at the first refusal of each name and then every 10 minutes while they go on, and the
// `module_refused` alarm while one was refused within the last REFUSED_ALARM_MS. A refused module
// reconnects and resends for ever, and none of its events arrive, while every table stays
// "within budget" (nothing waits): without these it would look like a quiet module.
//
// Concurrency: pure functions.

import type { BrokerRefusal } from '../ingest/broker.ts';

/** A refusal this recent keeps the alarm up (a module retries within seconds to minutes). */
export const REFUSED_ALARM_MS = 10 * 60_000;

const times = (n: number) => (n === 1 ? 'once' : `${n} times`);

/** What to do about it, by kind. */
function advice(site: string, r: BrokerRefusal): string {
  return r.kind === 'publish'
    ? `its events on that topic are not received; a module publishes to tilstand/${site}/events/<module>/<stream> with its own module name and this site's id (docs/operations.md, "A module is refused")`
    : `its events are not received; check the username and password the module connects with against those \`tilstand init\` wrote to secrets/modules.json (docs/operations.md, "A module is refused")`;
}

/** The log line for `sinceLastReport` more refusals of `r.who`. */
export function refusalLogLine(site: string, r: BrokerRefusal, sinceLastReport: number): string {
  const total = r.count > sinceLastReport ? ` (${r.count} since ${new Date(r.firstMs).toISOString()})` : '';
  return r.kind === 'publish'
    ? `broker: refused ${times(sinceLastReport)} a publish by ${JSON.stringify(r.who)} to ${r.what}, which it may not publish to${total}: ${advice(site, r)}`
    : `broker: refused ${times(sinceLastReport)} a connection as ${JSON.stringify(r.who)}: ${r.what}${total}: ${advice(site, r)}`;
}

/** The refusals that keep the alarm up at `nowMs`, as alarm messages, the latest first. */
export function refusalAlarms(site: string, refusals: readonly BrokerRefusal[], nowMs: number): Array<{ message: string; sinceMs: number }> {
  return refusals
    .filter((r) => nowMs - r.lastMs <= REFUSED_ALARM_MS)
    .map((r) => ({
      message:
        r.kind === 'publish'
          ? `publishes by ${JSON.stringify(r.who)} refused: ${times(r.count)}, the latest to ${r.what}, which it may not publish to — ${advice(site, r)}`
          : `connections as ${JSON.stringify(r.who)} refused: ${times(r.count)} (${r.what}) — ${advice(site, r)}`,
      sinceMs: r.firstMs,
    }));
}
