// Rule: assign a released, unassigned job to a free resource with the capability it needs.
// Jobs in queue order (priority, then due time); each free resource is offered once per run,
// to the first job that can use it. Command: operations `assign_job {job_id, resource_id}`.
//
// An approved assignment on its way to the module (RuleContext.underway) has promised its
// resource: while its job still waits to start, the resource is offered to no other job and the
// job is not proposed again, and an open proposal for that resource no longer holds.
//
// An open (or deferred) assignment that still holds (RuleContext.open, its recheck) has named its
// resource: the resource is offered to no other job until a person decides that proposal or the
// agent withdraws it, also to a job that came ahead of it in the queue since. v2 offered it again
// to such a job: two open proposals named one resource, and approving both sent a command the
// module had to refuse (or the compare-and-set found the second stale). The person sees the
// open proposal and can reject it to free the resource for the next run.
//
// A job whose situation the inbox would suppress (RuleContext.quiet: its assignment was rejected,
// or approved and its command timed out unanswered, within resuggestAfterDecisionMs) is skipped
// before it takes a resource: v3 matched it, the inbox dropped the draft, and the resource went to
// no job in that run — for as long as the decision kept the situation quiet (8 h by default).
//
// Effect (v5): the job is assigned to the resource, or one of its versions since the snapshot the
// approval checked shows it so (assigned, then run, done and removed before the write-back looked:
// the site off while the module worked, its events ingested at the restart); a job gone from the
// queue whose versions cannot tell (assigned and removed in one commit, a commit of the range
// expired) counts when the module acknowledged the command. v4 looked at the job now only, and
// timed out a command the module had carried out.
//
// v6: a job whose assignment was applied and that waits again (its machine went down, operations
// put it back in the queue unassigned) is a new occurrence (`newOccurrence`): it is proposed at
// once, not after the approval's quiet (resuggestAfterDecisionMs, 8 h). v5 left it unproposed for
// that long, and skipped it before matching, so it was not even counted as suppressed.

import { situationKey } from '../../inbox/index.ts';
import { byQueueOrder, job, resource, waitingToStart } from '../rows.ts';
import { jobStatus, msg, resourceState } from '../messages.ts';
import { gone, HOLDS, moduleAcknowledged, type Rule, type RuleContext } from '../rule.ts';

/** Per context (its `underway` list is its own): what `promised` found. */
const promisedOf = new WeakMap<readonly unknown[], Map<string, { job: string; proposal: string }>>();

/**
 * The underway assignments whose job still waits to start: resource id → {job, proposal}. Also
 * idle-resource's: a resource promised so is not idle, and its job no longer waits for one.
 */
export function promised(ctx: RuleContext): Map<string, { job: string; proposal: string }> {
  const cached = promisedOf.get(ctx.underway);
  if (cached) return cached;
  const out = new Map<string, { job: string; proposal: string }>();
  promisedOf.set(ctx.underway, out);
  for (const p of ctx.underway) {
    if (p.action !== 'assign_job' || p.ruleId !== assignJob.id) continue;
    const jr = ctx.tables.work_queue.get({ job_id: p.params.job_id! });
    if (jr && waitingToStart(job(jr))) out.set(String(p.params.resource_id), { job: String(p.params.job_id), proposal: p.id });
  }
  return out;
}

/**
 * The open and deferred assignments that still hold: resource id → job id. Their recheck is the
 * run's own (it withdraws the others in the same run, freeing their resources now).
 */
function named(ctx: RuleContext): Map<string, string> {
  const out = new Map<string, string>();
  for (const p of ctx.open) {
    if (p.action !== 'assign_job' || p.ruleId !== assignJob.id) continue;
    if (assignJob.recheck(ctx, p).holds) out.set(String(p.params.resource_id), String(p.params.job_id));
  }
  return out;
}

export const assignJob: Rule = {
  id: 'assign-job',
  version: '6',
  description: 'Assign a released, unassigned job to a free resource with the needed capability; a resource an approved assignment promised, or an open one names, is not offered again.',
  messages: {
    'assign-job.explanation': {
      en: 'Job {job} (priority {priority}) is released and waiting; {resource} is free and can {capability:data}. Start it there.',
      nb: 'Jobb {job} (prioritet {priority}) er frigitt og venter; {resource} er ledig og har ferdigheten {capability:data}. Start den der.',
      de: 'Auftrag {job} (Priorität {priority}) ist freigegeben und wartet; {resource} ist frei und hat die Fähigkeit {capability:data}. Dort starten.',
    },
    'assign-job.risk': {
      en: 'reversible, and the module refuses it if the job or the resource changed meanwhile',
      nb: 'kan omgjøres, og modulen avviser den hvis jobben eller ressursen har endret seg i mellomtiden',
      de: 'umkehrbar, und das Modul lehnt sie ab, wenn sich der Auftrag oder die Ressource inzwischen geändert hat',
    },
    'assign-job.recheckAssigned': { en: 'job {job} is now {status:data} on {resource}', nb: 'jobb {job} er nå {status:data} på {resource}', de: 'Auftrag {job} ist jetzt {status:data} auf {resource}' },
    'assign-job.recheckCapability': {
      en: 'resource {resource} can no longer {capability:data}',
      nb: 'ressurs {resource} har ikke lenger ferdigheten {capability:data}',
      de: 'Ressource {resource} hat die Fähigkeit {capability:data} nicht mehr',
    },
    'assign-job.recheckPromised': {
      en: 'resource {resource} is promised to job {job} by the approved {proposal}',
      nb: 'ressurs {resource} er lovet bort til jobb {job} av det godkjente forslaget {proposal}',
      de: 'Ressource {resource} ist Auftrag {job} durch den genehmigten Vorschlag {proposal} zugesagt',
    },
  },

  evaluate(ctx) {
    const jobs = ctx.tables.work_queue.scan().map((r) => ({ r, j: job(r) })).filter((x) => waitingToStart(x.j));
    jobs.sort((a, b) => byQueueOrder(a.j, b.j));
    const free = ctx.tables.resources.scan().map((r) => ({ r, x: resource(r) })).filter((f) => f.x.state === 'free');
    const promises = promised(ctx);
    const claims = named(ctx);
    const used = new Set<string>([...promises.keys(), ...claims.keys()]);
    const waitingForIt = new Set([...promises.values()].map((x) => x.job));
    // A job an open proposal names a resource for is matched to that one again: its draft is the
    // open proposal's duplicate (the run reports it so), and it takes no other resource.
    const claimOf = new Map<string, string>();
    for (const [resourceId, jobId] of claims) claimOf.set(jobId, resourceId);
    const drafts = [];
    for (const { r, j } of jobs) {
      if (waitingForIt.has(j.job_id)) continue;
      const own = claimOf.get(j.job_id);
      // A situation the inbox would suppress (decided lately) gets no draft: v3 drafted it, the
      // inbox dropped the draft, and the resource it took in this run went to no one.
      if (own === undefined && ctx.quiet(situationKey(assignJob.id, 'assign_job', { job_id: j.job_id }))) continue;
      const match =
        own !== undefined ? free.find((f) => f.x.resource_id === own) : free.find((f) => !used.has(f.x.resource_id) && f.x.capability !== null && f.x.capability === j.capability);
      if (!match) continue;
      used.add(match.x.resource_id);
      drafts.push({
        action: 'assign_job',
        module: 'operations',
        params: { job_id: j.job_id, resource_id: match.x.resource_id },
        keyParams: ['job_id'],
        risk: 'low' as const,
        riskReason: msg('assign-job.risk'),
        explanation: msg('assign-job.explanation', { job: j.job_id, priority: j.priority, resource: match.x.resource_id, capability: j.capability }),
        evidence: [
          { table: 'work_queue' as const, rows: [r] },
          { table: 'resources' as const, rows: [match.r] },
        ],
      });
    }
    return drafts;
  },

  recheck(ctx, p) {
    const jr = ctx.tables.work_queue.get({ job_id: p.params.job_id! });
    if (!jr) return gone(msg('recheck.jobGone', { job: p.params.job_id! }));
    const j = job(jr);
    if (!(j.status === 'released' && j.assigned_resource === null)) {
      return gone(
        j.assigned_resource
          ? msg('assign-job.recheckAssigned', { job: j.job_id, status: jobStatus(j.status), resource: j.assigned_resource })
          : msg('recheck.jobNow', { job: j.job_id, status: jobStatus(j.status) }),
      );
    }
    const rr = ctx.tables.resources.get({ resource_id: p.params.resource_id! });
    if (!rr) return gone(msg('recheck.resourceGone', { resource: p.params.resource_id! }));
    const x = resource(rr);
    if (x.state !== 'free') return gone(msg('recheck.resourceNow', { resource: x.resource_id, state: resourceState(x.state) }));
    if (x.capability !== j.capability) return gone(msg('assign-job.recheckCapability', { resource: x.resource_id, capability: String(j.capability) }));
    const promise = promised(ctx).get(x.resource_id);
    if (promise && promise.proposal !== p.id) return gone(msg('assign-job.recheckPromised', { resource: x.resource_id, job: promise.job, proposal: promise.proposal }));
    return HOLDS;
  },

  effectSeen(ctx, p) {
    const wq = ctx.tables.work_queue;
    const key = { job_id: p.params.job_id! };
    const jr = wq.get(key);
    if (jr !== undefined && job(jr).assigned_resource === p.params.resource_id) return true;
    // A version since the snapshot the approval checked (the job waited there: the recheck held
    // only then) that shows the assignment: the module acted, and the job moved on or left since.
    const checked = p.decision?.snapshots.checked.work_queue;
    const versions = typeof checked === 'number' ? wq.versionsSince(checked, key) : undefined;
    for (const c of versions ?? []) if ((c.kind === '+I' || c.kind === '+U') && job(c.row).assigned_resource === p.params.resource_id) return true;
    // A job gone whose versions cannot tell: the module's ok ack (a refusal is a failed ack). A job
    // still in the queue waits for its assignment to show: until then it stays promised.
    return jr === undefined && moduleAcknowledged(p);
  },

  // Applied (v6) means the job was seen assigned to the resource after the approval, or gone from
  // the queue (then the module's ok ack): a job that waits to start now has ended and begun again.
  // Where the versions since the checked snapshot can be read, one of them must show it so (not
  // waiting, or removed): a context on a state older than the one the effect was seen on is not
  // taken for a new occurrence.
  newOccurrence(ctx, p) {
    const wq = ctx.tables.work_queue;
    const key = { job_id: p.params.job_id! };
    const jr = wq.get(key);
    if (jr === undefined || !waitingToStart(job(jr))) return false;
    const checked = p.decision?.snapshots.checked.work_queue;
    if (typeof checked !== 'number') return false;
    const versions = wq.versionsSince(checked, key);
    return versions === undefined || versions.some((c) => c.kind === '-D' || ((c.kind === '+I' || c.kind === '+U') && !waitingToStart(job(c.row))));
  },
};
