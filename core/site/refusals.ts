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

/** What to do about it, by the broker's reason (a client id taken was told to check the password). */
function advice(site: string, r: BrokerRefusal): string {
  const doc = '(docs/operations.md, "A module is refused")';
  switch (r.reason) {
    case 'topic':
      return `its events on that topic are not received; a module publishes to tilstand/${site}/events/<module>/<stream> with its own module name and this site's id ${doc}`;
    case 'client_id':
      return `its events are not received; another module already connects with that client id: each module needs a client id of its own (the module client library's is module-${site}-<module>) ${doc}`;
    case 'credential_store':
      return `its events are not received; the site could not check the credentials (site.db): see the lines around this one in logs/site.log`;
    case 'packet_bytes':
      return `its events are not received; a packet that large is no event (events are at most 256 KiB by default): check what the module sends ${doc}`;
    case 'pre_auth_bytes':
      return `a client at that address sent more than a sign-in before the broker answered it: check what connects from there ${doc}`;
    case 'credentials':
      return `its events are not received; check the username and password the module connects with against those \`tilstand init\` wrote to secrets/modules.json ${doc}`;
  }
}

/** The log line for `sinceLastReport` more refusals of `r.who`. */
export function refusalLogLine(site: string, r: BrokerRefusal, sinceLastReport: number): string {
  const total = r.count > sinceLastReport ? ` (${r.count} since ${new Date(r.firstMs).toISOString()})` : '';
  const who = JSON.stringify(r.who);
  if (r.reason === 'topic') return `broker: refused ${times(sinceLastReport)} a publish by ${who} to ${r.what}, which it may not publish to${total}: ${advice(site, r)}`;
  if (r.reason === 'packet_bytes') return `broker: refused ${times(sinceLastReport)} a packet from ${who}: ${r.what}${total}: ${advice(site, r)}`;
  return `broker: refused ${times(sinceLastReport)} a connection as ${who}: ${r.what}${total}: ${advice(site, r)}`;
}

/** The refusals that keep the alarm up at `nowMs`, as alarm messages, the latest first. */
export function refusalAlarms(site: string, refusals: readonly BrokerRefusal[], nowMs: number): Array<{ message: string; sinceMs: number }> {
  return refusals
    .filter((r) => nowMs - r.lastMs <= REFUSED_ALARM_MS)
    .map((r) => ({
      message:
        r.reason === 'topic'
          ? `publishes by ${JSON.stringify(r.who)} refused: ${times(r.count)}, the latest to ${r.what}, which it may not publish to — ${advice(site, r)}`
          : `${r.reason === 'packet_bytes' ? 'packets from' : 'connections as'} ${JSON.stringify(r.who)} refused: ${times(r.count)} (${r.what}) — ${advice(site, r)}`,
      sinceMs: r.firstMs,
    }));
}
