// Rule: flag a resource that has been free for at least `idleMsMin` while work it could do waits
// (released and unassigned, or blocked, with its capability). A notice for the shift lead: no
// module carries it out, so approving it only records that someone looked. The idle period
// (`idle_since`) is part of the situation.
//
// An approved assignment on its way to the module (RuleContext.underway, assign-job's `promised`)
// has taken its resource and its job: the resource is not flagged (the person has just put it to
// work) and the job does not count as waiting; an open notice for such a resource no longer holds.
//
// The waiting jobs are cited most urgent first, in the work queue's order (rows.ts byQueueOrder,
// as assign-job and release-blocked-job serve them), so the first ten a shift lead reads are the
// ones to start. An open notice no longer holds once the resource has been free for less than
// `idleMsMin` (raised by a reconfigure), as a stock-reorder proposal is withdrawn once a changed
// reorder point is no longer above the position — counted from no earlier than the notice was
// made, so a clock stepped back does not withdraw it (and a later run flag it anew).

import { byQueueOrder, groupedOnce, isoMs, job, recheckNowMs, resource } from '../rows.ts';
import { msg, resourceKind, resourceState } from '../messages.ts';
import { gone, HOLDS, type Rule, type RuleContext } from '../rule.ts';
import type { Row } from '../read-only-table.ts';
import { promised } from './assign-job.ts';

const WAITING_LISTED_MAX = 10;

/** A work-queue scan's waiting jobs (released and unassigned, or blocked) by capability, in queue order; built once per scan array. */
const waitingByCapability = new WeakMap<readonly Row[], Map<string, Row[]>>();

const waitingCapability = (r: Row): string | undefined => {
  const j = job(r);
  return j.capability !== null && ((j.status === 'released' && j.assigned_resource === null) || j.status === 'blocked') ? j.capability : undefined;
};
const inQueueOrder = (a: Row, b: Row): number => byQueueOrder(job(a), job(b));

function waitingFor(ctx: RuleContext, capability: string): Row[] {
  const rows = ctx.tables.work_queue.scan();
  let groups = waitingByCapability.get(rows);
  if (groups === undefined) {
    // Sorted once, when the scan's groups are made: later calls on the same scan find them sorted.
    groups = groupedOnce(rows, waitingByCapability, waitingCapability);
    for (const g of groups.values()) g.sort(inQueueOrder);
  }
  const promisedJobs = new Set([...promised(ctx).values()].map((x) => x.job));
  return (groups.get(capability) ?? []).filter((r) => !promisedJobs.has(String(r.job_id)));
}

export const idleResource: Rule = {
  id: 'idle-resource',
  version: '4',
  description: 'Flag a resource idle (free for a while) while work with its capability waits, citing the waiting jobs most urgent first.',
  messages: {
    'idle-resource.explanation': {
      en: '{resource} ({kind:data}, {capability:data}) has been free for {minutes} min while {count} job(s) needing {capability:data} wait: {jobs}.',
      nb: '{resource} ({kind:data}, {capability:data}) har vært ledig i {minutes} min mens {count} jobb(er) som trenger {capability:data} venter: {jobs}.',
      de: '{resource} ({kind:data}, {capability:data}) ist seit {minutes} Min. frei, während {count} Auftrag/Aufträge mit Bedarf an {capability:data} warten: {jobs}.',
    },
    'idle-resource.kindUnknown': { en: 'resource', nb: 'ressurs', de: 'Ressource' },
    'idle-resource.risk': { en: 'a notice: nothing is sent to any module', nb: 'et varsel: ingenting sendes til noen modul', de: 'ein Hinweis: an kein Modul wird etwas gesendet' },
    'idle-resource.recheckState': { en: 'resource {resource} is now {state:data} (since {since})', nb: 'ressurs {resource} er nå {state:data} (siden {since})', de: 'Ressource {resource} ist jetzt {state:data} (seit {since})' },
    'idle-resource.recheckPromised': {
      en: 'resource {resource} is promised to job {job} by the approved {proposal}',
      nb: 'ressurs {resource} er lovet bort til jobb {job} av det godkjente forslaget {proposal}',
      de: 'Ressource {resource} ist Auftrag {job} durch den genehmigten Vorschlag {proposal} zugesagt',
    },
    'idle-resource.recheckNotIdleLong': {
      en: 'resource {resource} has been free for {minutes} min, less than the {threshold} min that make it idle',
      nb: 'ressurs {resource} har vært ledig i {minutes} min, mindre enn de {threshold} min før den regnes som uvirksom',
      de: 'Ressource {resource} ist seit {minutes} Min. frei, weniger als die {threshold} Min., ab denen sie als untätig gilt',
    },
    'idle-resource.recheckNoWork': { en: 'no work needing {capability:data} waits any more', nb: 'ingen jobb som trenger {capability:data} venter lenger', de: 'es wartet keine Arbeit mit Bedarf an {capability:data} mehr' },
  },

  evaluate(ctx) {
    const drafts = [];
    for (const r of ctx.tables.resources.scan()) {
      const x = resource(r);
      if (x.state !== 'free' || x.capability === null || x.since_ms === null || ctx.nowMs - x.since_ms < ctx.config.idleMsMin) continue;
      if (promised(ctx).has(x.resource_id)) continue;
      const waiting = waitingFor(ctx, x.capability);
      if (waiting.length === 0) continue;
      const idleMin = Math.round((ctx.nowMs - x.since_ms) / 60_000);
      const ids = waiting.slice(0, WAITING_LISTED_MAX).map((w) => String(w.job_id));
      drafts.push({
        action: 'flag_idle_resource',
        module: null,
        params: { resource_id: x.resource_id, capability: x.capability, idle_since: isoMs(x.since_ms), waiting_jobs: ids },
        keyParams: ['resource_id', 'idle_since'],
        risk: 'low' as const,
        riskReason: msg('idle-resource.risk'),
        explanation: msg('idle-resource.explanation', {
          resource: x.resource_id,
          kind: x.kind === null ? msg('idle-resource.kindUnknown') : resourceKind(x.kind),
          capability: x.capability,
          minutes: idleMin,
          count: waiting.length,
          jobs: waiting.length > ids.length ? [...ids, '…'] : ids,
        }),
        evidence: [
          { table: 'resources' as const, rows: [r] },
          { table: 'work_queue' as const, rows: waiting.slice(0, WAITING_LISTED_MAX) },
        ],
      });
    }
    return drafts;
  },

  recheck(ctx, p) {
    const rr = ctx.tables.resources.get({ resource_id: p.params.resource_id! });
    if (!rr) return gone(msg('recheck.resourceGone', { resource: p.params.resource_id! }));
    const x = resource(rr);
    if (x.state !== 'free' || x.since_ms === null || isoMs(x.since_ms) !== p.params.idle_since) {
      return gone(msg('idle-resource.recheckState', { resource: x.resource_id, state: resourceState(x.state), since: x.since_ms === null ? '?' : isoMs(x.since_ms) }));
    }
    // Counted from no earlier than the notice was made, after a step back of up to 10 min (v4,
    // `recheckNowMs`): a clock stepped back since (an NTP correction) withdrew it as "free for less
    // than idleMsMin", and the run that passed the same moment again flagged the same idle period
    // anew. A step back of hours (the notice made under a wrong clock) and a raised idleMsMin still withdraw it.
    const now = recheckNowMs(ctx.nowMs, p.createdAtMs);
    if (now - x.since_ms < ctx.config.idleMsMin) {
      return gone(msg('idle-resource.recheckNotIdleLong', { resource: x.resource_id, minutes: Math.round((now - x.since_ms) / 60_000), threshold: Math.round(ctx.config.idleMsMin / 60_000) }));
    }
    const promise = promised(ctx).get(x.resource_id);
    if (promise) return gone(msg('idle-resource.recheckPromised', { resource: x.resource_id, job: promise.job, proposal: promise.proposal }));
    if (x.capability === null || waitingFor(ctx, x.capability).length === 0) return gone(msg('idle-resource.recheckNoWork', { capability: String(x.capability) }));
    return HOLDS;
  },

  effectSeen() {
    return false; // a notice has no effect to see
  },
};
