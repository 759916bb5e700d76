// Typed views of the seed tables' rows (core/ingest/seed-tables.ts) for the rules, and the few
// calculations several rules share. Rows are in JSON form (read-only-table.ts).

import type { ReadOnlyTable, Row } from './read-only-table.ts';

export interface Job {
  job_id: string;
  status: string | null;
  blocked_reason: string | null;
  capability: string | null;
  material_item: string | null;
  material_qty: number | null;
  priority: number;
  due_at_ms: number | null;
  assigned_resource: string | null;
}

export interface Resource {
  resource_id: string;
  kind: string | null;
  capability: string | null;
  state: string | null;
  since_ms: number | null;
}

const s = (v: unknown): string | null => (typeof v === 'string' ? v : null);
/**
 * A number column's value: a JSON number, or the text core/lsm gives a BIGINT beyond 2^53 and a
 * DECIMAL ("12.50": a site that counts kilograms alters a quantity to DECIMAL). Only digits were
 * read before, so a decimal quantity counted as none: a well-stocked row was reordered, a job on
 * covered material was not released.
 */
export const n = (v: unknown): number | null => (typeof v === 'number' ? v : typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v) ? Number(v) : null);

/**
 * A sum or difference of quantities without binary floating-point noise: decimal quantities add
 * up in doubles to 0.19999999999999998 where the stock holds 0.2, which put a row at its point
 * below it and asked procurement for 19.800000000000001. Fifteen significant digits are what a
 * double keeps of a decimal; whole quantities below 10^15 are unchanged.
 */
export const exact = (x: number): number => Number(x.toPrecision(15));

/** TIMESTAMP JSON text is a UTC wall clock without a zone. */
export function timestampMs(v: unknown): number | null {
  if (typeof v !== 'string' || v.length === 0) return null;
  const t = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(v) ? v : `${v}Z`);
  return Number.isFinite(t) ? t : null;
}

export const isoMs = (ms: number): string => new Date(ms).toISOString();

// The typed view of a row is made once per row object and frozen: rows are frozen and shared by
// every rule of a run and by later runs on the same snapshot (read-only-table.ts ScanCache), and
// parsing a TIMESTAMP (`timestampMs`) was most of a run's time when each rule converted every job
// again. Keyed weakly: views go with the snapshot's rows.
const jobViews = new WeakMap<Row, Readonly<Job>>();
const resourceViews = new WeakMap<Row, Readonly<Resource>>();

export function job(r: Row): Readonly<Job> {
  let j = jobViews.get(r);
  if (j === undefined) {
    j = Object.freeze({
      job_id: String(r.job_id),
      status: s(r.status),
      blocked_reason: s(r.blocked_reason),
      capability: s(r.capability),
      material_item: s(r.material_item),
      material_qty: n(r.material_qty),
      priority: n(r.priority) ?? 0,
      due_at_ms: timestampMs(r.due_at),
      assigned_resource: s(r.assigned_resource),
    });
    jobViews.set(r, j);
  }
  return j;
}

export function resource(r: Row): Readonly<Resource> {
  let x = resourceViews.get(r);
  if (x === undefined) {
    x = Object.freeze({ resource_id: String(r.resource_id), kind: s(r.kind), capability: s(r.capability), state: s(r.state), since_ms: timestampMs(r.since) });
    resourceViews.set(r, x);
  }
  return x;
}

/** Jobs in queue order: higher priority first, then earlier due, then id. */
export function byQueueOrder(a: Job, b: Job): number {
  return b.priority - a.priority || (a.due_at_ms ?? Infinity) - (b.due_at_ms ?? Infinity) || (a.job_id < b.job_id ? -1 : a.job_id > b.job_id ? 1 : 0);
}

/** A released job nobody runs yet. */
export const waitingToStart = (j: Job): boolean => j.status === 'released' && j.assigned_resource === null;

/**
 * on_hand − reserved (nulls as 0). A reservation is a quantity promised to orders and never less
 * than none: a negative `reserved` (a module's correction sent as a delta, a bad count) counts as
 * 0, or it would add stock that is not there (a job released on material the shelf does not hold).
 */
export const available = (r: Row): number => exact((n(r.on_hand) ?? 0) - reserved(r));
/** What orders have reserved (null, or a negative that is no reservation, as 0). */
export const reserved = (r: Row): number => Math.max(0, n(r.reserved) ?? 0);
/** What open purchase orders bring (null, or a negative that is no order, as 0). */
export const inbound = (r: Row): number => Math.max(0, n(r.inbound) ?? 0);
/** available + inbound: what the item will have once open purchase orders arrive. */
export const position = (r: Row): number => exact(available(r) + inbound(r));

/**
 * A scan's rows grouped by `key` (scan order kept; a row whose key is undefined is left out),
 * built once per scan array and kept in `cache`: a snapshot's scan is one frozen array shared by
 * every rule of a run and by later runs on the same snapshot.
 */
export function groupedOnce<K>(rows: readonly Row[], cache: WeakMap<readonly Row[], Map<K, Row[]>>, key: (r: Row) => K | undefined): Map<K, Row[]> {
  let groups = cache.get(rows);
  if (!groups) {
    groups = new Map();
    for (const r of rows) {
      const k = key(r);
      if (k === undefined) continue;
      const g = groups.get(k);
      if (g) g.push(r);
      else groups.set(k, [r]);
    }
    cache.set(rows, groups);
  }
  return groups;
}

/** A snapshot's stock rows by item. */
const byItem = new WeakMap<readonly Row[], Map<unknown, Row[]>>();

/** Stock rows of an item across locations (in scan order). */
export function stockOf(stock: ReadOnlyTable, item: string): Row[] {
  return [...(groupedOnce(stock.scan(), byItem, (r) => r.item).get(item) ?? [])];
}

/**
 * How far a clock may have stepped back under an open proposal and still be taken for a
 * correction of it (an NTP step of a PC that ran a little ahead): `recheckNowMs`.
 */
export const CLOCK_STEP_BACK_HELD_MS = 10 * 60_000;

/**
 * The time a rule's recheck counts a proposal's time condition ("free for 15 min", "finishes
 * after its due time") from: the proposal's making, when the clock now is earlier by at most
 * CLOCK_STEP_BACK_HELD_MS — a small correction withdrew the proposal, and the run that passed the
 * same moment again proposed it anew —, else the clock now. A step back of hours says the
 * proposal was made under a clock that was wrong (a PC whose hardware clock runs in local time,
 * corrected at the next NTP sync): counted from its making, it stayed open until real time
 * caught up.
 */
export function recheckNowMs(nowMs: number, createdAtMs: number): number {
  return createdAtMs > nowMs && createdAtMs - nowMs <= CLOCK_STEP_BACK_HELD_MS ? createdAtMs : nowMs;
}
