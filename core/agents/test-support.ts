// Test support for core/agents and core/inbox tests: a temporary site warehouse with the three
// state tables, writers to seed them, a UserStore with fast scrypt, an Inbox and an Agent.
//
// The table specs mirror core/ingest/seed-tables.ts (core/agents may not import core/ingest);
// test/agents/full-loop.test.ts runs the agent on the real seed tables fed by the real Ingestor,
// so a drift between the two shows up there.

import Database from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Catalog, type SchemaSpec, type TableWriter } from '../lsm/index.ts';
import { Inbox, UserStore, type InboxOptions, type Role } from '../inbox/index.ts';
import { Agent, type AgentOptions } from './agent.ts';

export const SITE = 's1';
export const DB = `site_${SITE}`;
export const T0 = Date.UTC(2026, 10, 30, 8, 0, 0);
export const FAST_SCRYPT = { N: 1 << 10, r: 8, p: 1 };

export const STATE_SPECS: Record<'work_queue' | 'resources' | 'stock', SchemaSpec> = {
  work_queue: {
    fields: [
      { name: 'job_id', type: 'STRING NOT NULL' },
      { name: 'status', type: 'STRING' },
      { name: 'blocked_reason', type: 'STRING' },
      { name: 'capability', type: 'STRING' },
      { name: 'material_item', type: 'STRING' },
      { name: 'material_qty', type: 'INT' },
      { name: 'priority', type: 'INT' },
      { name: 'due_at', type: 'TIMESTAMP(3)' },
      { name: 'assigned_resource', type: 'STRING' },
      { name: 'ops_seq', type: 'BIGINT' },
    ],
    primaryKeys: ['job_id'],
    options: { bucket: '1', 'merge-engine': 'deduplicate', 'sequence.field': 'ops_seq' },
  },
  resources: {
    fields: [
      { name: 'resource_id', type: 'STRING NOT NULL' },
      { name: 'kind', type: 'STRING' },
      { name: 'capability', type: 'STRING' },
      { name: 'state', type: 'STRING' },
      { name: 'since', type: 'TIMESTAMP(3)' },
      { name: 'ops_seq', type: 'BIGINT' },
    ],
    primaryKeys: ['resource_id'],
    options: { bucket: '1', 'merge-engine': 'deduplicate', 'sequence.field': 'ops_seq' },
  },
  stock: {
    fields: [
      { name: 'item', type: 'STRING NOT NULL' },
      { name: 'location', type: 'STRING NOT NULL' },
      { name: 'on_hand', type: 'INT' },
      { name: 'inventory_seq', type: 'BIGINT' },
      { name: 'reserved', type: 'INT' },
      { name: 'commerce_seq', type: 'BIGINT' },
      { name: 'inbound', type: 'INT' },
      { name: 'procurement_seq', type: 'BIGINT' },
    ],
    primaryKeys: ['item', 'location'],
    options: {
      bucket: '1',
      'merge-engine': 'partial-update',
      'fields.inventory_seq.sequence-group': 'on_hand',
      'fields.commerce_seq.sequence-group': 'reserved',
      'fields.procurement_seq.sequence-group': 'inbound',
    },
  },
};

export interface JobRow {
  job_id: string;
  status?: string;
  blocked_reason?: string | null;
  capability?: string;
  material_item?: string | null;
  material_qty?: number | null;
  priority?: number;
  due_at_ms?: number | null;
  assigned_resource?: string | null;
}

export class TestSite {
  readonly dir = mkdtempSync(join(tmpdir(), 'tilstand-agents-'));
  nowMs = T0;
  readonly clock = () => this.nowMs;
  readonly catalog = new Catalog(join(this.dir, 'warehouse'), { clock: this.clock });
  readonly writers: Record<'work_queue' | 'resources' | 'stock', TableWriter>;
  readonly db = new Database(join(this.dir, 'site.db'));
  readonly users = new UserStore(this.db, { scrypt: FAST_SCRYPT, nowMs: this.clock, failuresMax: 3, lockoutMs: 60_000 });
  private seq = 0n;
  private closers: (() => void)[] = [];

  constructor(extraOptions: Record<string, string> = {}) {
    this.catalog.createDatabase(DB);
    const w = {} as TestSite['writers'];
    for (const [name, spec] of Object.entries(STATE_SPECS)) {
      const t = this.catalog.createTable({ database: DB, table: name }, { ...spec, options: { ...spec.options, ...extraOptions } });
      w[name as keyof TestSite['writers']] = t.newWriter({ commitUser: 'test-ingest' });
    }
    this.writers = w;
  }

  job(j: JobRow): void {
    this.writers.work_queue.writeRecord({
      job_id: j.job_id,
      status: j.status ?? 'released',
      blocked_reason: j.blocked_reason ?? null,
      capability: j.capability ?? 'pick',
      material_item: j.material_item ?? null,
      material_qty: j.material_qty ?? null,
      priority: j.priority ?? 1,
      due_at: j.due_at_ms === undefined ? (T0 + 48 * 3600_000) * 1000 : j.due_at_ms === null ? null : j.due_at_ms * 1000,
      assigned_resource: j.assigned_resource ?? null,
      ops_seq: ++this.seq,
    });
  }

  resource(id: string, capability: string, state: string, sinceMs = this.nowMs, kind = 'machine'): void {
    this.writers.resources.writeRecord({ resource_id: id, kind, capability, state, since: sinceMs * 1000, ops_seq: ++this.seq });
  }

  stock(item: string, location: string, v: { on_hand?: number; reserved?: number; inbound?: number }): void {
    const s = ++this.seq;
    this.writers.stock.writeRecord({
      item,
      location,
      ...(v.on_hand !== undefined ? { on_hand: v.on_hand, inventory_seq: s } : {}),
      ...(v.reserved !== undefined ? { reserved: v.reserved, commerce_seq: s } : {}),
      ...(v.inbound !== undefined ? { inbound: v.inbound, procurement_seq: s } : {}),
    });
  }

  commit(): void {
    for (const w of Object.values(this.writers)) w.commit();
  }

  async addUser(name: string, role: Role, pin = '1234'): Promise<void> {
    await this.users.add({ name, role, pin });
  }

  inbox(o: Partial<InboxOptions> = {}): Inbox {
    const inbox = Inbox.open({ catalog: this.catalog, database: DB, users: this.users, recheck: () => ({ holds: true, snapshots: {} }), clock: this.clock, onWarning: () => undefined, ...o });
    this.closers.push(() => inbox.close());
    return inbox;
  }

  /** An inbox and an agent wired to each other as the site does (recheck, reevaluate). */
  agentAndInbox(o: { agent?: Partial<AgentOptions>; inbox?: Partial<InboxOptions> } = {}): { agent: Agent; inbox: Inbox } {
    let agent!: Agent;
    const inbox = this.inbox({ recheck: (p) => agent.recheck(p), reevaluate: () => void agent.run(), ...o.inbox });
    agent = new Agent({ catalog: this.catalog, database: DB, inbox, clock: this.clock, onWarning: () => undefined, ...o.agent });
    return { agent, inbox };
  }

  close(): void {
    for (const c of this.closers.splice(0).reverse()) c();
    for (const w of Object.values(this.writers)) w.close();
    this.db.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
