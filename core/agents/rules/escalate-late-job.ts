// Rule: escalate a job that will miss its due time. Estimate for a job not started yet (released
// or blocked): now + the run time of its capability (config) > due_at. The due time is part of the
// situation, so a job whose due time moves is a new situation. Jobs at the top priority (9) are
// left alone. Command: operations `escalate_job {job_id, reason}` (priority + 1).
//
// The proposal says "raise its priority from {priority_from}", and its effect is seen when the
// job's priority is above that. Both hold only while the job still has that priority: one raised
// since is escalated already; one lowered since (a planner's decision the proposal predates) would
// be raised from the lower priority, to no more than priority_from, and the effect never seen (v2
// approved it and its command timed out). So the recheck — the compare-and-set at approval, and
// each run — holds only at priority_from; a run then proposes the job anew from its priority now.
//
// Lowered after the approval, before the module acts, the job is raised from the lower priority:
// v3 looked for a priority above priority_from only, missed that effect, and the command timed
// out. v4 also counts a raise among the job's versions since the snapshot the approval checked
// (`decision.snapshots.checked`; ReadOnlyTable.versionsSince). The priority at that snapshot is
// priority_from itself (the recheck held only there), so reading that snapshot alone would tell
// nothing: only the versions after it show a lowering followed by the module's raise. A raise by
// a planner looks the same. v5: where the versions cannot show the raise — a lowering and the
// raise in one commit (only the net lowering is written), a commit of the range expired (snapshot
// retention), or the job gone from the queue — the module's ok ack counts instead; v4 timed such
// a command out though the module had acted. A refusal is a failed ack and never counts. v6: the
// recheck's estimate starts no earlier than the proposal was made, so a clock stepped back does
// not withdraw it (and a later run propose it anew).

import { jobDurationMs } from '../config.ts';
import { isoMs, job, recheckNowMs } from '../rows.ts';
import { jobStatus, msg } from '../messages.ts';
import { gone, HOLDS, moduleAcknowledged, type Rule } from '../rule.ts';

const PRIORITY_MAX = 9;

export const escalateLateJob: Rule = {
  id: 'escalate-late-job',
  version: '6',
  description: 'Escalate a job that will miss its due time (now + the run time of its capability > due_at), from the priority it has when approved.',
  messages: {
    'escalate-late-job.explanation': {
      en: 'Job {job} is {state} and due {due}. Started now it takes about {minutes} min ({capability:data}), so it ends {late} late. Raise its priority from {priority}.',
      nb: 'Jobb {job} er {state} og har frist {due}. Startet nå tar den ca. {minutes} min ({capability:data}), så den blir ferdig {late} for sent. Hev prioriteten fra {priority}.',
      de: 'Auftrag {job} ist {state} und fällig am {due}. Jetzt gestartet dauert er etwa {minutes} Min. ({capability:data}) und wird {late} zu spät fertig. Priorität von {priority} anheben.',
    },
    'escalate-late-job.lateUnderMinute': { en: 'less than a minute', nb: 'under ett minutt', de: 'weniger als eine Minute' },
    'escalate-late-job.lateMinutes': { en: 'about {n} min', nb: 'ca. {n} min', de: 'etwa {n} Min.' },
    'escalate-late-job.risk': {
      en: "raises one job's priority by one; other jobs of the same capability may wait a little longer",
      nb: 'hever prioriteten til én jobb med én; andre jobber med samme ferdighet kan måtte vente litt lenger',
      de: 'hebt die Priorität eines Auftrags um eins an; andere Aufträge derselben Fähigkeit warten vielleicht etwas länger',
    },
    'escalate-late-job.recheckDue': {
      en: "job {job}'s due time changed to {due}",
      nb: 'fristen for jobb {job} er endret til {due}',
      de: 'der Fälligkeitstermin von Auftrag {job} wurde auf {due} geändert',
    },
    'escalate-late-job.noDue': { en: 'none', nb: 'ingen', de: 'keinen' },
    'escalate-late-job.recheckPriority': { en: 'job {job} already has priority {priority}', nb: 'jobb {job} har allerede prioritet {priority}', de: 'Auftrag {job} hat bereits Priorität {priority}' },
    'escalate-late-job.recheckLowered': {
      en: "job {job}'s priority was lowered to {priority} since the proposal (from {from})",
      nb: 'prioriteten til jobb {job} er senket til {priority} siden forslaget (fra {from})',
      de: 'die Priorität von Auftrag {job} wurde seit dem Vorschlag auf {priority} gesenkt (von {from})',
    },
    'escalate-late-job.recheckInTime': { en: 'job {job} can now make its due time', nb: 'jobb {job} kan nå bli ferdig innen fristen', de: 'Auftrag {job} kann seinen Termin jetzt einhalten' },
  },

  evaluate(ctx) {
    const drafts = [];
    for (const r of ctx.tables.work_queue.scan()) {
      const j = job(r);
      if ((j.status !== 'released' && j.status !== 'blocked') || j.due_at_ms === null || j.priority >= PRIORITY_MAX) continue;
      const duration = jobDurationMs(ctx.config, j.capability);
      const finish = ctx.nowMs + duration;
      if (finish <= j.due_at_ms) continue;
      // Under half a minute late rounds to "0 min", which reads as not late at all.
      const lateMin = Math.round((finish - j.due_at_ms) / 60_000);
      const late = lateMin < 1 ? msg('escalate-late-job.lateUnderMinute') : msg('escalate-late-job.lateMinutes', { n: lateMin });
      // The command's reason goes to the module, which reads English.
      const lateText = lateMin < 1 ? 'less than a minute' : `about ${lateMin} min`;
      drafts.push({
        action: 'escalate_job',
        module: 'operations',
        params: { job_id: j.job_id, due_at: isoMs(j.due_at_ms), priority_from: j.priority, reason: `will finish ${lateText} after its due time` },
        keyParams: ['job_id', 'due_at'],
        risk: 'low' as const,
        riskReason: msg('escalate-late-job.risk'),
        explanation: msg('escalate-late-job.explanation', {
          job: j.job_id,
          state: j.status === 'blocked' ? msg('job.blocked', { reason: j.blocked_reason ?? msg('reason.none') }) : msg('job.status.released'),
          due: isoMs(j.due_at_ms),
          minutes: Math.round(duration / 60_000),
          capability: j.capability ?? msg('capability.unknown'),
          late,
          priority: j.priority,
        }),
        evidence: [{ table: 'work_queue' as const, rows: [r] }],
      });
    }
    return drafts;
  },

  recheck(ctx, p) {
    const jr = ctx.tables.work_queue.get({ job_id: p.params.job_id! });
    if (!jr) return gone(msg('recheck.jobGone', { job: p.params.job_id! }));
    const j = job(jr);
    if (j.status !== 'released' && j.status !== 'blocked') return gone(msg('recheck.jobNow', { job: j.job_id, status: jobStatus(j.status) }));
    if (j.due_at_ms === null || isoMs(j.due_at_ms) !== p.params.due_at) {
      return gone(msg('escalate-late-job.recheckDue', { job: j.job_id, due: j.due_at_ms === null ? msg('escalate-late-job.noDue') : isoMs(j.due_at_ms) }));
    }
    const from = Number(p.params.priority_from);
    if (j.priority > from) return gone(msg('escalate-late-job.recheckPriority', { job: j.job_id, priority: j.priority }));
    if (j.priority < from) return gone(msg('escalate-late-job.recheckLowered', { job: j.job_id, priority: j.priority, from }));
    // Estimated from no earlier than the proposal was made, after a step back of up to 10 min (v6,
    // `recheckNowMs`): a clock stepped back since (an NTP correction) withdrew it as "can now make
    // its due time", and the run that passed the same moment again proposed it anew. A step back of
    // hours (the proposal made under a wrong clock) and a shorter run time in the config still withdraw it.
    if (recheckNowMs(ctx.nowMs, p.createdAtMs) + jobDurationMs(ctx.config, j.capability) <= j.due_at_ms) return gone(msg('escalate-late-job.recheckInTime', { job: j.job_id }));
    return HOLDS;
  },

  effectSeen(ctx, p) {
    const wq = ctx.tables.work_queue;
    const jr = wq.get({ job_id: p.params.job_id! });
    const from = Number(p.params.priority_from);
    if (jr !== undefined && job(jr).priority > from) return true;
    // Lowered after the approval, before the module acted: the module raises from the lower
    // priority, to no more than priority_from. Its effect is then a raise in the job's versions
    // since the snapshot the approval checked, where the job had priority_from (the recheck held
    // only there).
    const checked = p.decision?.snapshots.checked.work_queue;
    const versions = typeof checked === 'number' ? wq.versionsSince(checked, { job_id: p.params.job_id! }) : undefined;
    let before = from;
    let lowered = false;
    for (const c of versions ?? []) {
      if (c.kind === '-U' || c.kind === '-D') continue;
      const priority = job(c.row).priority;
      if (priority > before) return true;
      lowered ||= priority < from;
      before = priority;
    }
    // Where the tables cannot show the raise, the module's ok ack counts (v5; v4 timed these out
    // though the module had acted): the job left the queue (escalated, run, removed), a commit of
    // the range expired, or the job was lowered below priority_from since — a lowering and the
    // module's raise in one commit show only the net lowering, which the versions cannot tell
    // from a raise still on its way.
    return (jr === undefined || versions === undefined || lowered) && moduleAcknowledged(p);
  },
};
