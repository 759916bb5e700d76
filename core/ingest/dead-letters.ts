// The dead_letters table: every event ingest could not apply, with why, so ingest never stops
// for a bad event and an operator can fix the cause and replay it.
//
// For now a PRIMARY-KEY table keyed by the event's journal position (deduplicate engine): the
// append-table flavour DESIGN.md names is being built in core/lsm by another engineer. Keying by
// position makes writing a dead letter idempotent (a recovery that writes it again replaces it with
// the same row) and lets `replayDeadLetters` flip `status` to 'replayed' in place, and
// `dismissDeadLetters` to 'dismissed': a person looked at a letter no replay can mend (not JSON, a
// value the module got wrong) and closed it, under their name and with why, so the dead_letters
// alarm can clear. A dismissed letter keeps its payload and is never replayed.
//
// Concurrency: pure conversions; the Ingestor owns the writer.

import { DEAD_LETTER_REASONS, type DeadLetterReason } from './envelope.ts';
import type { SchemaChange, Table } from '../lsm/index.ts';
import type { TableDefinition } from './seed-tables.ts';

export const DEAD_LETTERS_TABLE_NAME = 'dead_letters';

export const DEAD_LETTERS_TARGET_FILE_SIZE = '2 mb';

export const DEAD_LETTERS_TABLE: TableDefinition = {
  name: DEAD_LETTERS_TABLE_NAME,
  comment: 'Events ingest refused, keyed by journal position; status open until replayed or dismissed.',
  fields: [
    { id: 0, name: 'position', type: 'BIGINT NOT NULL', description: 'journal position of the event' },
    { id: 1, name: 'status', type: 'STRING NOT NULL', description: 'open | replayed | dismissed' },
    { id: 2, name: 'reason', type: 'STRING NOT NULL', description: `one of ${DEAD_LETTER_REASONS.join(', ')}` },
    { id: 3, name: 'detail', type: 'STRING' },
    { id: 4, name: 'path', type: 'STRING', description: 'where in the payload the fault is' },
    { id: 5, name: 'bindings', type: 'STRING', description: 'JSON array of the bindings that failed; null = all matching' },
    { id: 6, name: 'topic', type: 'STRING NOT NULL' },
    { id: 7, name: 'module', type: 'STRING' },
    { id: 8, name: 'stream', type: 'STRING' },
    { id: 9, name: 'seq', type: 'BIGINT' },
    { id: 10, name: 'payload', type: 'BYTES NOT NULL', description: 'the raw payload as received' },
    { id: 11, name: 'received_at', type: 'TIMESTAMP(3) NOT NULL' },
    { id: 12, name: 'replayed_at', type: 'TIMESTAMP(3)' },
    // Added after the first release: a table made before gets them at the Ingestor's open
    // (schema change, old rows read them as null).
    { id: 13, name: 'dismissed_at', type: 'TIMESTAMP(3)' },
    { id: 14, name: 'dismissed_by', type: 'STRING', description: 'the signed-in user who dismissed it' },
    { id: 15, name: 'dismissed_note', type: 'STRING', description: 'why, in their words' },
  ],
  partitionKeys: [],
  primaryKeys: ['position'],
  // Files rolled at 2 MB (not Paimon's 128 MB), as approval_inbox's (core/inbox inbox-tables.ts):
  // the table only grows, its keys at the end, and a list reads whole letters only of the files
  // that hold those it returns (`wholeDeadLetters`) instead of the whole table's.
  options: { bucket: '1', 'merge-engine': 'deduplicate', 'target-file-size': DEAD_LETTERS_TARGET_FILE_SIZE },
};

export type DeadLetterStatus = 'open' | 'replayed' | 'dismissed';

/** Who closed a dismissed letter, when and why. */
export interface Dismissal {
  atMs: number;
  by: string;
  note: string;
}

export interface DeadLetter {
  position: bigint;
  status: DeadLetterStatus;
  reason: DeadLetterReason;
  detail: string;
  path: string | null;
  /** Bindings that failed (replay re-runs only these); null when none ran (replay runs every match). */
  bindings: string[] | null;
  topic: string;
  module: string | null;
  stream: string | null;
  seq: number | null;
  payload: Buffer;
  receivedAtMs: number;
  replayedAtMs: number | null;
  /** Set when status is 'dismissed'. */
  dismissed: Dismissal | null;
}

/** The row in memory form, by column name (TIMESTAMP(3) = microseconds). */
export function deadLetterRecord(d: DeadLetter): Record<string, unknown> {
  return {
    position: d.position,
    status: d.status,
    reason: d.reason,
    detail: d.detail,
    path: d.path,
    bindings: d.bindings === null ? null : JSON.stringify(d.bindings),
    topic: d.topic,
    module: d.module,
    stream: d.stream,
    seq: d.seq === null ? null : BigInt(d.seq),
    payload: new Uint8Array(d.payload.buffer, d.payload.byteOffset, d.payload.byteLength),
    received_at: Math.trunc(d.receivedAtMs) * 1000,
    replayed_at: d.replayedAtMs === null ? null : Math.trunc(d.replayedAtMs) * 1000,
    dismissed_at: d.dismissed === null ? null : Math.trunc(d.dismissed.atMs) * 1000,
    dismissed_by: d.dismissed?.by ?? null,
    dismissed_note: d.dismissed?.note ?? null,
  };
}

/** A row read from the table (schema order given by `columns`) back to a DeadLetter. */
export function deadLetterFromRow(columns: readonly { name: string }[], row: readonly unknown[]): DeadLetter {
  const v: Record<string, unknown> = {};
  columns.forEach((c, i) => (v[c.name] = row[i]));
  const reason = v.reason as DeadLetterReason;
  if (!(DEAD_LETTER_REASONS as readonly string[]).includes(reason)) throw new Error(`dead letter ${String(v.position)}: unknown reason '${reason}'`);
  return {
    position: v.position as bigint,
    status: v.status === 'replayed' || v.status === 'dismissed' ? v.status : 'open',
    reason,
    detail: (v.detail as string | null) ?? '',
    path: (v.path as string | null) ?? null,
    bindings: v.bindings === null || v.bindings === undefined ? null : (JSON.parse(v.bindings as string) as string[]),
    topic: v.topic as string,
    module: (v.module as string | null) ?? null,
    stream: (v.stream as string | null) ?? null,
    seq: v.seq === null || v.seq === undefined ? null : Number(v.seq as bigint),
    payload: Buffer.from(v.payload as Uint8Array),
    receivedAtMs: Math.trunc((v.received_at as number) / 1000),
    replayedAtMs: v.replayed_at === null || v.replayed_at === undefined ? null : Math.trunc((v.replayed_at as number) / 1000),
    dismissed:
      v.status === 'dismissed'
        ? { atMs: v.dismissed_at === null || v.dismissed_at === undefined ? 0 : Math.trunc((v.dismissed_at as number) / 1000), by: (v.dismissed_by as string | null) ?? '', note: (v.dismissed_note as string | null) ?? '' }
        : null,
  };
}

/**
 * A dead_letters table made by an earlier version, brought to DEAD_LETTERS_TABLE's columns: those
 * it lacks are added at the end, in order (one schema change, `schema-<N+1>`; rows written before
 * read them as null), and given its `target-file-size` when it has none. Returns the table as it
 * is now. Only dead_letters is upgraded this way (the Ingestor's open): the other tables are the
 * site's own definitions.
 */
export function upgradeDeadLetters(table: Table): Table {
  const changes: SchemaChange[] = [];
  let after = table.schema.fields.at(-1)!.name;
  for (const f of DEAD_LETTERS_TABLE.fields) {
    if (table.schema.fieldIndex.has(f.name)) continue;
    changes.push({ kind: 'addColumn', name: f.name, type: f.type, ...(f.description === undefined ? {} : { description: f.description }), position: { after } });
    after = f.name;
  }
  if (table.schema.options.raw['target-file-size'] === undefined) changes.push({ kind: 'setOption', key: 'target-file-size', value: DEAD_LETTERS_TARGET_FILE_SIZE });
  if (changes.length > 0) table.alter(changes);
  return table;
}

/** What every list reads of every letter: its position and status, and the columns asked for. */
export interface LetterHead {
  position: bigint;
  status: DeadLetterStatus;
  topic?: string;
  reason?: string;
}

/**
 * Position and status (and `more` columns) of every letter of the table (after position `after`:
 * files before it are not read), in position order. A module sending a contract version the site
 * lacks makes a letter of each event — hundreds of thousands in a day — so lists read these few
 * columns (the table store decodes only those) and whole letters, payloads and all, only of those
 * they return (`wholeDeadLetters`).
 */
export function deadLetterHeads(table: Table, more: readonly ('topic' | 'reason')[] = [], after: bigint | null = null): LetterHead[] {
  const out: LetterHead[] = [];
  const where = after === null ? [] : [{ column: 'position', op: '>' as const, value: after }];
  for (const row of table.scanRows({}, { projection: ['position', 'status', ...more], where })) {
    const h: LetterHead = { position: row[0] as bigint, status: row[1] === 'replayed' || row[1] === 'dismissed' ? row[1] : 'open' };
    more.forEach((c, i) => (h[c] = row[2 + i] as string));
    out.push(h);
  }
  return out;
}

/** A closed letter as a purge reads it: what its tombstone carries (`tombstoneRecord`). */
export interface ClosedLetterHead {
  position: bigint;
  status: 'replayed' | 'dismissed';
  reason: string;
  topic: string;
  /** TIMESTAMP(3) columns in memory form (microseconds). */
  receivedAt: number;
  replayedAt: number | null;
  dismissedAt: number | null;
}

/** One turn of the event loop: what came meanwhile (an event, a PUBACK, a request) goes first. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Letters `forClosedDeadLetters` reads between two turns of the event loop (≈ 30 ms here). */
export const CLOSED_SCAN_TURN_EVERY = 20_000;

/**
 * Hands the letters replayed or dismissed before `beforeMs` (their replayed_at or dismissed_at; a
 * closed letter without that time is never among them) to `each`, in position order, `batch` at a
 * time (awaited); returns how many letters the table holds. Reads the few columns it needs, never a
 * payload, from the latest snapshot (its reader pins it while `each` commits), with a turn of the event loop
 * after each batch and every `turnEvery` letters read: a table a flood filled holds millions, and
 * only a batch of them is held at once.
 */
export async function forClosedDeadLetters(
  table: Table,
  beforeMs: number,
  o: { batch: number; turnEvery: number },
  each: (heads: ClosedLetterHead[]) => void | Promise<void>,
): Promise<number> {
  const beforeUs = Math.trunc(beforeMs) * 1000;
  let heads: ClosedLetterHead[] = [];
  let letters = 0;
  const reader = table.reader();
  try {
    for (const row of reader.scan({ projection: ['position', 'status', 'reason', 'topic', 'received_at', 'replayed_at', 'dismissed_at'] })) {
      if (++letters % o.turnEvery === 0) await nextTurn();
      const status = row[1];
      const at = status === 'replayed' ? row[5] : status === 'dismissed' ? row[6] : null;
      if (typeof at !== 'number' || at >= beforeUs) continue;
      heads.push({ position: row[0] as bigint, status: status as 'replayed' | 'dismissed', reason: row[2] as string, topic: row[3] as string, receivedAt: row[4] as number, replayedAt: row[5] as number | null, dismissedAt: row[6] as number | null });
      if (heads.length === o.batch) {
        await each(heads);
        heads = [];
        await nextTurn();
      }
    }
    if (heads.length > 0) await each(heads);
  } finally {
    reader.close();
  }
  return letters;
}

/**
 * The record a purge deletes a closed letter with (a -D record): its key and what it was without
 * its payload, detail and dismissal note — the values a -D record of a primary-key table carries
 * are not read back, but its NOT NULL columns need one.
 */
export function tombstoneRecord(h: ClosedLetterHead): Record<string, unknown> {
  return { position: h.position, status: h.status, reason: h.reason, topic: h.topic, payload: new Uint8Array(0), received_at: h.receivedAt, replayed_at: h.replayedAt, dismissed_at: h.dismissedAt };
}

/** The whole letters at `positions` (each one of the table's), in that order. */
export function wholeDeadLetters(table: Table, positions: readonly bigint[]): DeadLetter[] {
  return allFound(table, positions, deadLettersAt(table, positions));
}

/** `letters`, read at `positions`, when each was found; a missing one is an error naming it. */
export function allFound(table: Table, positions: readonly bigint[], letters: readonly (DeadLetter | undefined)[]): DeadLetter[] {
  return letters.map((d, i) => {
    if (!d) throw new Error(`dead letter ${positions[i]}: not in table ${table.name} (read at another snapshot?)`);
    return d;
  });
}

/**
 * The heads of one topic and/or one reason (exactly as stored; heads read with those columns), or
 * all of them: the letters of one group `tilstand status` names (`openLetterGroups`).
 */
export function lettersOf(heads: LetterHead[], o: { topic?: string; reason?: string }): LetterHead[] {
  if (o.topic === undefined && o.reason === undefined) return heads;
  return heads.filter((h) => (o.topic === undefined || h.topic === o.topic) && (o.reason === undefined || h.reason === o.reason));
}

/** Open letters of one topic with one reason (`openLetterGroups`). */
export interface OpenLetterGroup {
  topic: string;
  reason: string;
  count: number;
}

/**
 * The open letters grouped by topic and reason, the largest groups first (then by topic): what an
 * operator asks first — which module sends what the site refuses, and why. A module that sent a
 * contract version the site lacked leaves one group of thousands, not thousands of lines.
 */
export function openLetterGroups(table: Table): OpenLetterGroup[] {
  return groupOpenLetters(deadLetterHeads(table, ['topic', 'reason']));
}

/** `openLetterGroups` of heads read with topic and reason (the Ingestor's include those not yet committed). */
export function groupOpenLetters(heads: readonly LetterHead[]): OpenLetterGroup[] {
  const groups = new Map<string, OpenLetterGroup>();
  for (const h of heads) {
    if (h.status !== 'open') continue;
    const key = `${h.topic}\u0000${h.reason}`;
    const g = groups.get(key);
    if (g) g.count++;
    else groups.set(key, { topic: h.topic ?? '', reason: h.reason ?? '', count: 1 });
  }
  return [...groups.values()].sort((a, b) => b.count - a.count || (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : a.reason < b.reason ? -1 : 1));
}

/** Journal positions in ascending order. */
export const comparePositions = (a: bigint, b: bigint): number => (a < b ? -1 : a > b ? 1 : 0);

/** The whole letter at each of `positions`, undefined where there is none, in that order. */
export function deadLettersAt(table: Table, positions: readonly bigint[]): (DeadLetter | undefined)[] {
  if (positions.length === 0) return [];
  const reader = table.reader();
  try {
    return positions.map((position) => {
      const row = reader.get({ position });
      return row && deadLetterFromRow(table.schema.fields, row);
    });
  } finally {
    reader.close();
  }
}

/**
 * Dead letters as a person looks at them, of every status: the open ones first (oldest first:
 * they wait for someone), then the replayed and dismissed ones newest first — the first `limit`.
 * `all` is in position order. Cut in position order instead, a new open letter would not be
 * listed once `limit` older letters were closed.
 */
export function openFirst<T extends Pick<LetterHead, 'status'>>(all: readonly T[], limit: number): T[] {
  const open = all.filter((d) => d.status === 'open');
  if (open.length >= limit) return open.slice(0, limit);
  return [...open, ...all.filter((d) => d.status !== 'open').reverse().slice(0, limit - open.length)];
}

/**
 * `ids`, then every other open dead letter of `all` from the topic of one of them with its reason
 * (a vendor's test run, a module sending one wrong value: one note closes them all).
 */
export function withOpenAlike(all: readonly Required<LetterHead>[], ids: readonly bigint[]): bigint[] {
  const named = new Set(ids);
  const like = new Set(all.filter((d) => named.has(d.position)).map((d) => `${d.topic}\u0000${d.reason}`));
  const out = [...ids];
  for (const d of all) if (d.status === 'open' && !named.has(d.position) && like.has(`${d.topic}\u0000${d.reason}`)) out.push(d.position);
  return out;
}
