// Demo-like module events for tests and the replay benchmark, without a broker: the operations
// (jobs, resources), inventory, commerce and procurement streams of the demo site (core/site/demo,
// which core/replay may not import), as the JSON envelopes modules publish. Seeded (mulberry32):
// the same seed and times give the same bytes.

import type { JobEventRow } from '../ingest/seed-contracts.ts';

const CAPABILITIES = ['pick', 'pack', 'forklift'] as const;
const LOCATIONS = ['A-01', 'A-02', 'B-01', 'DOCK'] as const;
const RESOURCES = [
  { resource_id: 'FORK-1', kind: 'machine', capability: 'forklift' },
  { resource_id: 'FORK-2', kind: 'machine', capability: 'forklift' },
  { resource_id: 'PACK-1', kind: 'machine', capability: 'pack' },
  { resource_id: 'PICK-A', kind: 'team', capability: 'pick' },
  { resource_id: 'PICK-B', kind: 'team', capability: 'pick' },
  { resource_id: 'PACK-T', kind: 'team', capability: 'pack' },
] as const;

const iso = (ms: number): string => new Date(ms).toISOString().slice(0, 23);

export interface DemoEvent {
  topic: string;
  payload: Buffer;
  atMs: number;
}

type Job = JobEventRow;

interface Res {
  resource_id: string;
  kind: string;
  capability: string;
  state: 'free' | 'busy' | 'down';
  since: string;
}

const CONTRACTS: Record<string, string> = {
  'operations/jobs': 'operations.jobs',
  'operations/resources': 'operations.resources',
  'inventory/stock': 'inventory.stock',
  'commerce/reservations': 'commerce.reservations',
  'procurement/inbound': 'procurement.inbound',
};

export interface DemoEventOptions {
  site: string;
  seed: number;
  /** Items (ITEM-001…); 20 in the demo. More items make a larger site (the benchmark). */
  items?: number;
  jobs?: number;
}

export class DemoEvents {
  private state: number;
  private readonly seqs = new Map<string, number>();
  private readonly jobs = new Map<string, Job>();
  private readonly resources = new Map<string, Res>();
  private readonly stock = new Map<string, { on_hand: number; reserved: number; inbound: number }>();
  private readonly items: string[];
  private nextJob = 1;

  constructor(private readonly o: DemoEventOptions) {
    this.state = o.seed >>> 0;
    this.items = Array.from({ length: o.items ?? 20 }, (_, i) => `ITEM-${String(i + 1).padStart(3, '0')}`);
  }

  private next(): number {
    this.state = (this.state + 0x6d2b79f5) >>> 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  private int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  private pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.next() * list.length)]!;
  }

  private emit(out: DemoEvent[], atMs: number, module: string, stream: string, op: string, before: object | null, after: object | null): void {
    const key = `${module}/${stream}`;
    const seq = (this.seqs.get(key) ?? 0) + 1;
    this.seqs.set(key, seq);
    const envelope = { op, before, after, source: { module, stream, seq }, ts_ms: atMs, contract: { name: CONTRACTS[key], version: 1 } };
    out.push({ topic: `tilstand/${this.o.site}/events/${module}/${stream}`, payload: Buffer.from(JSON.stringify(envelope)), atMs });
  }

  private newJob(now: number): Job {
    return {
      job_id: `J-${String(this.nextJob++).padStart(4, '0')}`,
      status: 'released',
      blocked_reason: null,
      capability: this.pick(CAPABILITIES),
      material_item: this.pick(this.items),
      material_qty: this.int(1, 40),
      priority: this.int(0, 3),
      due_at: iso(now + this.int(1, 48) * 3600_000),
      assigned_resource: null,
    };
  }

  /** Every row, as `r` events (what modules publish when they start). */
  initial(atMs: number): DemoEvent[] {
    const out: DemoEvent[] = [];
    for (const r of RESOURCES) {
      const res: Res = { ...r, state: 'free', since: iso(atMs) };
      this.resources.set(r.resource_id, res);
      this.emit(out, atMs, 'operations', 'resources', 'r', null, { ...res });
    }
    for (let i = 0; i < (this.o.jobs ?? 30); i++) {
      const j = this.newJob(atMs);
      if (this.next() < 0.2) Object.assign(j, { status: 'blocked', blocked_reason: `material short: ${j.material_item}` });
      this.jobs.set(j.job_id, j);
      this.emit(out, atMs, 'operations', 'jobs', 'r', null, { ...j });
    }
    for (const item of this.items) {
      for (const location of LOCATIONS) {
        const s = { on_hand: this.int(0, 60), reserved: this.int(0, 10), inbound: this.next() < 0.3 ? this.int(5, 30) : 0 };
        this.stock.set(`${item}|${location}`, s);
        this.emit(out, atMs, 'inventory', 'stock', 'r', null, { item, location, qty: s.on_hand });
        this.emit(out, atMs, 'commerce', 'reservations', 'r', null, { item, location, reserved_qty: s.reserved });
        this.emit(out, atMs, 'procurement', 'inbound', 'r', null, { item, location, inbound_qty: s.inbound, next_due_at: null });
      }
    }
    return out;
  }

  private setJob(out: DemoEvent[], at: number, j: Job, change: Partial<Job>): void {
    const before = { ...j };
    Object.assign(j, change);
    this.emit(out, at, 'operations', 'jobs', 'u', before, { ...j });
  }
  private setRes(out: DemoEvent[], at: number, r: Res, state: Res['state']): void {
    const before = { ...r };
    r.state = state;
    r.since = iso(at);
    this.emit(out, at, 'operations', 'resources', 'u', before, { ...r });
  }

  /** One change at `atMs` (one or a few events). */
  step(atMs: number): DemoEvent[] {
    const out: DemoEvent[] = [];
    const r = this.next();
    const by = (s: Job['status']) => [...this.jobs.values()].filter((j) => j.status === s);
    if (r < 0.2) {
      const released = by('released');
      const j = released.length > 0 ? this.pick(released) : undefined;
      const free = j && [...this.resources.values()].filter((x) => x.state === 'free' && x.capability === j.capability);
      if (j && free && free.length > 0 && this.next() < 0.5) {
        const res = this.pick(free);
        this.setRes(out, atMs, res, 'busy');
        this.setJob(out, atMs, j, { status: 'in_progress', assigned_resource: res.resource_id });
      }
    } else if (r < 0.35) {
      const running = by('in_progress');
      if (running.length > 0) {
        const j = this.pick(running);
        const res = j.assigned_resource === null ? undefined : this.resources.get(j.assigned_resource);
        this.setJob(out, atMs, j, { status: 'done' });
        if (res && res.state === 'busy') this.setRes(out, atMs, res, 'free');
      }
    } else if (r < 0.4) {
      const released = by('released');
      if (released.length > 0) {
        const j = this.pick(released);
        this.setJob(out, atMs, j, { status: 'blocked', blocked_reason: `material short: ${j.material_item}` });
      }
    } else if (r < 0.44) {
      const blocked = by('blocked');
      if (blocked.length > 0) this.setJob(out, atMs, this.pick(blocked), { status: 'released', blocked_reason: null });
    } else if (r < 0.5) {
      const done = by('done');
      if (done.length > 0) {
        const j = this.pick(done);
        this.jobs.delete(j.job_id);
        this.emit(out, atMs, 'operations', 'jobs', 'd', { ...j }, null);
        const n = this.newJob(atMs);
        this.jobs.set(n.job_id, n);
        this.emit(out, atMs, 'operations', 'jobs', 'c', null, { ...n });
      }
    } else if (r < 0.53) {
      const down = [...this.resources.values()].filter((x) => x.state === 'down');
      const free = [...this.resources.values()].filter((x) => x.state === 'free');
      if (down.length > 0 && this.next() < 0.6) this.setRes(out, atMs, this.pick(down), 'free');
      else if (free.length > 0) this.setRes(out, atMs, this.pick(free), 'down');
    } else {
      const item = this.pick(this.items);
      const location = this.pick(LOCATIONS);
      const s = this.stock.get(`${item}|${location}`)!;
      const k = this.next();
      if (k < 0.5) {
        s.on_hand = Math.max(0, s.on_hand + this.int(-8, 6));
        this.emit(out, atMs, 'inventory', 'stock', 'u', null, { item, location, qty: s.on_hand });
      } else if (k < 0.8) {
        s.reserved = Math.max(0, s.reserved + this.int(-3, 4));
        this.emit(out, atMs, 'commerce', 'reservations', 'u', null, { item, location, reserved_qty: s.reserved });
      } else {
        s.inbound = this.next() < 0.5 ? 0 : this.int(5, 30);
        this.emit(out, atMs, 'procurement', 'inbound', 'u', null, { item, location, inbound_qty: s.inbound, next_due_at: null });
      }
    }
    return out;
  }
}
