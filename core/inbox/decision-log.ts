// The decision log: every proposal, withdrawal, decision, refusal and command outcome, one row
// each, with an id that grows by one. The next id is stored in the table's snapshot properties
// (`tilstand.decision_log.next_id`), committed atomically with the rows it follows.
//
// Concurrency: owns the table's writer (one DecisionLog per data directory). `append` buffers;
// `commit` makes the entries durable. Readers (CLI, HQ) read the table directly.

import { rowHeld, type Predicate, type Table, type TableWriter } from '../lsm/index.ts';
import { rowRecord } from './inbox-tables.ts';
import type { Decision, Json, ProposalInput } from './proposal.ts';

export const NEXT_ID_PROPERTY = 'tilstand.decision_log.next_id';

export interface DecisionLogEntry {
  readonly id: number;
  readonly atMs: number;
  readonly proposalId: string | null;
  readonly event: string;
  readonly actor: string;
  readonly detail: Json;
}

/**
 * What each kind of entry says in `detail`. The inbox writes entries with these, and the recovery
 * at open (log-recovery.ts) rebuilds lost ones with the same, so a rebuilt entry reads as the
 * original did.
 */
export const entryDetail = {
  proposed: (p: Pick<ProposalInput, 'situationKey' | 'ruleId' | 'ruleVersion' | 'action' | 'params' | 'risk'>) => ({
    situation: p.situationKey,
    rule: `${p.ruleId}@${p.ruleVersion}`,
    action: p.action,
    params: p.params,
    risk: p.risk,
  }),
  withdrawn: (reason: string | null) => ({ reason }),
  decided: (d: Decision) => ({ role: d.role, comment: d.comment, snapshots: d.snapshots, reason: d.reason }),
  command: (topic: string, detail: string | null) => ({ topic, detail }),
  /** A config.json key a signed-in person changed (no proposal): its path, and its value before and after (null: not set). */
  configChanged: (key: string, before: Json, after: Json) => ({ key, before, after }),
};

/** The event of a config change made by a person (Inbox.recordConfigChange). */
export const CONFIG_CHANGED_EVENT = 'config_changed';

export class DecisionLog {
  private readonly writer: TableWriter;
  private nextId: number;

  /**
   * `compaction`, `onWarning`: the writer's (core/lsm WriterOptions: what a commit's maintenance
   * could not do); `afterCommit`: called with the writer after each commit (the Inbox runs a
   * deferred compaction from there).
   */
  constructor(
    private readonly table: Table,
    private readonly o: { compaction?: 'inline' | 'deferred'; onWarning?: (message: string) => void; afterCommit?: (w: TableWriter) => void } = {},
  ) {
    this.writer = table.newWriter({ commitUser: 'tilstand-inbox', ...(o.compaction ? { compaction: o.compaction } : {}), ...(o.onWarning ? { onWarning: o.onWarning } : {}) });
    const stored = table.committedProperties()[NEXT_ID_PROPERTY];
    this.nextId = stored === undefined ? this.scanNextId() : Number(stored);
    if (!Number.isSafeInteger(this.nextId) || this.nextId < 1) throw new Error(`assertion failed: decision_log next id ${stored}`);
  }

  /** For a table written before the property existed: one more than the largest id. */
  private scanNextId(): number {
    let max = 0;
    for (const [id] of this.table.scanRows({}, { projection: ['entry_id'] })) max = Math.max(max, Number(id));
    return max + 1;
  }

  append(e: Omit<DecisionLogEntry, 'id'>): number {
    const id = this.nextId;
    try {
      this.writer.writeRecord({ entry_id: BigInt(id), at_ms: BigInt(e.atMs), proposal_id: e.proposalId, event: e.event, actor: e.actor, detail: JSON.stringify(e.detail) });
    } catch (err) {
      // Taken once the writer holds the entry: a write the table refuses leaves no gap in the ids,
      // and one that failed after the take (a flush on a full disk; the writer keeps the entry for
      // the next commit) keeps its id — given again, the next entry replaced it under that key.
      if (!rowHeld(err)) throw err;
      this.nextId++;
      throw err;
    }
    this.nextId++;
    return id;
  }

  /** The id the next appended entry gets. */
  get nextEntryId(): number {
    return this.nextId;
  }

  /** Ids below `id` are spoken for (named by approval_inbox rows): the next entry gets at least `id`. */
  reserveThrough(id: number): void {
    if (id > this.nextId) this.nextId = id;
  }

  commit(): void {
    this.writer.commit({ [NEXT_ID_PROPERTY]: String(this.nextId) });
    this.o.afterCommit?.(this.writer);
  }

  /** Expires the table's snapshots and tags without a commit (Inbox.expireIdle). */
  expire(): void {
    this.writer.expire();
  }

  /** Entries of one proposal (or all, when undefined), oldest first; `fromId`: none before it exist for it. */
  entries(proposalId?: string, fromId?: number): DecisionLogEntry[] {
    return readDecisionLog(this.table, proposalId, fromId);
  }

  close(): void {
    this.writer.close();
  }
}

/**
 * Reads the log from any process (no writer needed): one proposal's entries, or all. `fromId`
 * (the proposal's `log_first_entry`) starts the read at that entry: files of older entries are
 * not opened. `event`: only the entries of that event.
 */
export function readDecisionLog(table: Table, proposalId?: string, fromId?: number, event?: string): DecisionLogEntry[] {
  const out: DecisionLogEntry[] = [];
  const fields = table.schema.fields;
  const where: Predicate[] = [];
  if (proposalId !== undefined) where.push({ column: 'proposal_id', op: '=', value: proposalId });
  if (fromId !== undefined) where.push({ column: 'entry_id', op: '>=', value: BigInt(fromId) });
  if (event !== undefined) where.push({ column: 'event', op: '=', value: event });
  for (const row of table.scanRows({}, { where })) {
    const r = rowRecord(fields, row);
    out.push({
      id: Number(r.entry_id),
      atMs: Number(r.at_ms),
      proposalId: (r.proposal_id as string | null) ?? null,
      event: String(r.event),
      actor: String(r.actor),
      detail: typeof r.detail === 'string' ? (JSON.parse(r.detail) as Json) : null,
    });
  }
  return out.sort((a, b) => a.id - b.id);
}

/** A config.json key a person changed (a `config_changed` entry, Inbox.recordConfigChange). */
export interface ConfigChange {
  readonly id: number;
  readonly atMs: number;
  readonly user: string;
  readonly key: string;
  /** The key's value before and after (null: not set). */
  readonly before: Json;
  readonly after: Json;
}

/**
 * The id the log's next entry gets, as of its latest snapshot: every entry below it is committed
 * there. Undefined for a log no release with the property has committed.
 */
export function decisionLogNextId(table: Table): number | undefined {
  const v = table.committedProperties()[NEXT_ID_PROPERTY];
  const n = v === undefined ? NaN : Number(v);
  return Number.isSafeInteger(n) && n >= 1 ? n : undefined;
}

/**
 * The log's `config_changed` entries, newest first; `fromId`: those with that entry id or a later
 * one (files of older entries are not opened).
 */
export function readConfigChanges(table: Table, fromId?: number): ConfigChange[] {
  const out: ConfigChange[] = [];
  for (const e of readDecisionLog(table, undefined, fromId, CONFIG_CHANGED_EVENT)) {
    const d = e.detail as { key?: unknown; before?: Json; after?: Json } | null;
    if (typeof d?.key === 'string') out.push({ id: e.id, atMs: e.atMs, user: e.actor, key: d.key, before: d.before ?? null, after: d.after ?? null });
  }
  return out.reverse();
}
