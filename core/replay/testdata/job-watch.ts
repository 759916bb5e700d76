// A rule of one's own, as an integrator writes it beside an installed appliance: a notice for
// each released job nobody has taken yet, which no installed rule proposes. Loaded by a rules
// config's `ruleFiles` (core/replay rule-files.test.ts); it imports from the checkout as such a
// file would.
import { gone, HOLDS, msg, type Rule } from '../../agents/index.ts';

const jobWatch: Rule = {
  id: 'job-watch',
  version: '1',
  description: 'A notice for each released job not yet assigned.',
  messages: {
    'job-watch.explanation': { en: 'Job {job} waits for a resource.', nb: 'Jobb {job} venter på en ressurs.', de: 'Auftrag {job} wartet auf eine Ressource.' },
    'job-watch.risk': { en: 'a notice', nb: 'et varsel', de: 'ein Hinweis' },
    'job-watch.taken': { en: 'job {job} no longer waits', nb: 'jobb {job} venter ikke lenger', de: 'Auftrag {job} wartet nicht mehr' },
  },
  evaluate(ctx) {
    return ctx.tables.work_queue
      .scan()
      .filter((r) => r.status === 'released' && r.assigned_resource === null)
      .map((r) => ({
        action: 'watch_job',
        module: null,
        params: { job: String(r.job_id) },
        keyParams: ['job'],
        risk: 'low' as const,
        riskReason: msg('job-watch.risk'),
        explanation: msg('job-watch.explanation', { job: String(r.job_id) }),
        evidence: [{ table: 'work_queue' as const, rows: [r] }],
      }));
  },
  recheck(ctx, p) {
    const r = ctx.tables.work_queue.get({ job_id: p.params.job! });
    return r && r.status === 'released' && r.assigned_resource === null ? HOLDS : gone(msg('job-watch.taken', { job: String(p.params.job) }));
  },
  effectSeen: () => false,
};

export default jobWatch;
