// Simulated operations module: 30 jobs (released → in progress → done; blocked on material and
// released again; a done job is removed and a new one released in its place, keeping the queue
// busy; a job starts mostly when a shift lead approves its assignment) and 6 resources
// (machines and teams: free, busy, down). Streams `jobs` and `resources`.
//
// Commands (on tilstand/<site>/commands/operations; `action` names the command):
//   {action: 'assign_job', job_id, resource_id}  a released job starts on a free resource of its capability
//   {action: 'release_job', job_id}               a blocked job is released
//   {action: 'escalate_job', job_id, reason?}     the job's priority goes up by one (at most 9)
// Each answers {ok: true, result: {job_id, status, …}} or {ok: false, error}; the effect reaches
// Tilstand as ordinary events, never through the ack.

import { OPERATIONS_JOBS, OPERATIONS_RESOURCES, type JobEventRow } from '../../ingest/seed-contracts.ts';
import type { Command, CommandResult } from '../../ingest/module-client/index.ts';
import { DemoModule, type DemoModuleOptions } from './module.ts';
import { DEMO_CAPABILITIES, DEMO_ITEMS, DEMO_JOBS_COUNT, DEMO_RESOURCES, isoMs } from './warehouse.ts';

type Job = JobEventRow;

interface Resource {
  resource_id: string;
  kind: 'machine' | 'team';
  capability: string;
  state: 'free' | 'busy' | 'down';
  since: string;
}

const PRIORITY_MAX = 9;
/** Done jobs the queue keeps (a shift's recent work); beyond it each step replaces one. */
export const DONE_KEPT_MAX = 5;
/** Jobs blocked at most at once (material shortages come and go; all-blocked is no floor). */
export const BLOCKED_MAX = 8;
/**
 * Share of the start draws (35 % of the steps) in which the floor starts a released job on a free
 * resource itself. At 1 (as before) it took every free resource within seconds, so each of the
 * agent's assignments was withdrawn before anyone could read it; at 0.1 a free resource waits
 * minutes, and its proposal with it.
 */
const SELF_START = 0.1;
/**
 * Share of the release draws (10 % of the steps) in which material comes for a blocked job
 * without anyone asking. At 1 (as before) a blocked job was released on its own within about a
 * minute, and the agent's release proposals were withdrawn in a median 40 s, before a newcomer
 * could read one; at 0.15 a blocked job waits several minutes, mostly for a shift lead.
 */
const SELF_RELEASE = 0.15;
const JOB_STATUSES = new Set<unknown>(['released', 'blocked', 'in_progress', 'done']);
const RESOURCE_STATES = new Set<unknown>(['free', 'busy', 'down']);

export class OperationsModule extends DemoModule {
  private readonly jobs = new Map<string, Job>();
  private readonly resources = new Map<string, Resource>();
  private nextJob = 1;

  constructor(o: DemoModuleOptions) {
    super('operations', o);
    const now = this.now();
    for (const r of DEMO_RESOURCES) this.resources.set(r.resource_id, { ...r, state: 'free', since: isoMs(now) });
    for (let i = 0; i < DEMO_JOBS_COUNT; i++) {
      const job = this.newJob(now);
      if (this.rng.chance(0.2)) {
        job.status = 'blocked';
        job.blocked_reason = `material short: ${job.material_item}`;
      }
      this.jobs.set(job.job_id, job);
    }
    this.client.onCommand((c) => this.onCommand(c));
  }

  protected exportState(): unknown {
    return { nextJob: this.nextJob, jobs: [...this.jobs.values()], resources: [...this.resources.values()] };
  }

  protected importState(state: unknown): void {
    const v = state as { nextJob?: unknown; jobs?: unknown; resources?: unknown } | null;
    if (!v || !Number.isSafeInteger(v.nextJob) || !Array.isArray(v.jobs) || !Array.isArray(v.resources)) throw new Error('expected {nextJob, jobs, resources}');
    const jobs = v.jobs as Job[];
    const resources = v.resources as Resource[];
    for (const j of jobs) if (typeof j?.job_id !== 'string' || !JOB_STATUSES.has(j.status)) throw new Error(`not a job: ${JSON.stringify(j)}`);
    for (const r of resources) if (typeof r?.resource_id !== 'string' || !RESOURCE_STATES.has(r.state)) throw new Error(`not a resource: ${JSON.stringify(r)}`);
    this.jobs.clear();
    for (const j of jobs) this.jobs.set(j.job_id, j);
    this.resources.clear();
    for (const r of resources) this.resources.set(r.resource_id, r);
    this.nextJob = v.nextJob as number;
  }

  protected snapshot(): void {
    for (const r of this.resources.values()) this.emit('resources', 'r', null, { ...r }, OPERATIONS_RESOURCES);
    for (const j of this.jobs.values()) this.emit('jobs', 'r', null, { ...j }, OPERATIONS_JOBS);
  }

  protected step(): void {
    const by = (s: Job['status']) => [...this.jobs.values()].filter((j) => j.status === s);
    // Done jobs leave the queue as fast as they come: left to the draw below (8 % of the steps),
    // they piled up until, after some minutes, all 30 were done and nothing was left to propose.
    const done = by('done');
    if (done.length > DONE_KEPT_MAX) return this.replace(this.rng.pick(done));
    const r = this.rng.next();
    if (r < 0.35) {
      const released = by('released');
      const job = released.length > 0 ? this.rng.pick(released) : undefined;
      const res = job && [...this.resources.values()].filter((x) => x.state === 'free' && x.capability === job.capability);
      if (job && res && res.length > 0) {
        // The floor starts a job without Tilstand now and then; most wait for a shift lead to
        // approve the agent's assignment (assign_job), which is what the demo is there to show.
        if (this.rng.chance(SELF_START)) this.startJob(job, this.rng.pick(res));
      } else this.maybeResource();
    } else if (r < 0.65) {
      const running = by('in_progress');
      if (running.length > 0) this.finish(this.rng.pick(running));
    } else if (r < 0.75) {
      const released = by('released');
      if (released.length > 0 && by('blocked').length < BLOCKED_MAX) {
        const j = this.rng.pick(released);
        this.setJob(j, { status: 'blocked', blocked_reason: `material short: ${j.material_item}` });
      }
    } else if (r < 0.85) {
      const blocked = by('blocked');
      if (blocked.length > 0 && this.rng.chance(SELF_RELEASE)) this.setJob(this.rng.pick(blocked), { status: 'released', blocked_reason: null });
    } else if (r < 0.93) {
      if (done.length > 0) this.replace(this.rng.pick(done));
    } else {
      this.maybeResource();
    }
  }

  private onCommand(c: Command): CommandResult {
    this.stats.commands++;
    const jobId = typeof c.job_id === 'string' ? c.job_id : undefined;
    const job = jobId === undefined ? undefined : this.jobs.get(jobId);
    switch (c.action) {
      case 'assign_job': {
        if (!job) return { ok: false, error: `no such job: ${String(c.job_id)}` };
        const res = typeof c.resource_id === 'string' ? this.resources.get(c.resource_id) : undefined;
        if (!res) return { ok: false, error: `no such resource: ${String(c.resource_id)}` };
        if (job.status !== 'released') return { ok: false, error: `job ${job.job_id} is ${job.status}, not released` };
        if (res.state !== 'free') return { ok: false, error: `resource ${res.resource_id} is ${res.state}` };
        if (res.capability !== job.capability) return { ok: false, error: `resource ${res.resource_id} cannot ${job.capability}` };
        this.startJob(job, res);
        return { ok: true, result: { job_id: job.job_id, status: job.status, assigned_resource: res.resource_id } };
      }
      case 'release_job':
        if (!job) return { ok: false, error: `no such job: ${String(c.job_id)}` };
        if (job.status !== 'blocked') return { ok: false, error: `job ${job.job_id} is ${job.status}, not blocked` };
        this.setJob(job, { status: 'released', blocked_reason: null });
        return { ok: true, result: { job_id: job.job_id, status: job.status } };
      case 'escalate_job':
        if (!job) return { ok: false, error: `no such job: ${String(c.job_id)}` };
        if (job.status === 'done') return { ok: false, error: `job ${job.job_id} is done` };
        this.setJob(job, { priority: Math.min(PRIORITY_MAX, job.priority + 1) });
        return { ok: true, result: { job_id: job.job_id, status: job.status, priority: job.priority } };
      default:
        return { ok: false, error: `unknown action ${JSON.stringify(c.action)} (expected assign_job, release_job or escalate_job)` };
    }
  }

  private newJob(now: number): Job {
    const id = `J-${String(this.nextJob++).padStart(4, '0')}`;
    return {
      job_id: id,
      status: 'released',
      blocked_reason: null,
      capability: this.rng.pick(DEMO_CAPABILITIES),
      material_item: this.rng.pick(DEMO_ITEMS),
      material_qty: this.rng.int(1, 40),
      priority: this.rng.int(0, 3),
      due_at: isoMs(now + this.rng.int(1, 48) * 3600_000),
      assigned_resource: null,
    };
  }

  private setJob(job: Job, change: Partial<Job>): void {
    const before = { ...job };
    Object.assign(job, change);
    this.emit('jobs', 'u', before, { ...job }, OPERATIONS_JOBS);
  }

  private setResource(res: Resource, state: Resource['state']): void {
    const before = { ...res };
    res.state = state;
    res.since = isoMs(this.now());
    this.emit('resources', 'u', before, { ...res }, OPERATIONS_RESOURCES);
  }

  private startJob(job: Job, res: Resource): void {
    this.setResource(res, 'busy');
    this.setJob(job, { status: 'in_progress', assigned_resource: res.resource_id });
  }

  private finish(job: Job): void {
    const res = job.assigned_resource === null ? undefined : this.resources.get(job.assigned_resource);
    this.setJob(job, { status: 'done' });
    if (res && res.state === 'busy') this.setResource(res, 'free');
  }

  /** A done job leaves the queue and a new one is released in its place. */
  private replace(job: Job): void {
    this.jobs.delete(job.job_id);
    this.emit('jobs', 'd', { ...job }, null, OPERATIONS_JOBS);
    const next = this.newJob(this.now());
    this.jobs.set(next.job_id, next);
    this.emit('jobs', 'c', null, { ...next }, OPERATIONS_JOBS);
  }

  /** A free resource goes down, or a down one comes back. */
  private maybeResource(): void {
    const down = [...this.resources.values()].filter((r) => r.state === 'down');
    if (down.length > 0 && this.rng.chance(0.6)) return this.setResource(this.rng.pick(down), 'free');
    const free = [...this.resources.values()].filter((r) => r.state === 'free');
    if (free.length > 0 && this.rng.chance(0.3)) this.setResource(this.rng.pick(free), 'down');
  }
}
