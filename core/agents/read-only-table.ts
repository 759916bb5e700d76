// ReadOnlyTable: what a rule gets instead of a Table — one snapshot of one table, readable and
// nothing else. No writer, no tags, no expiration, no way back to the Table.
//
// Read-only by type: the interface has only `scan`, `get`, `getAt`, `changesSince`,
// `versionsSince`, `tagSnapshotId` and a few names.
// Read-only at runtime: the handle is a frozen object behind a Proxy whose closures hold the
// Table; it has no property that leads to it, and naming any Table or TableWriter mutator on it
// (`newWriter`, `createTag`, `deleteTag`, `write`, `commit`, …, also through a cast) throws
// AgentError('ReadOnly'), as does setting or defining any property.
//
// Rows are in the JSON forms of core/lsm/types.ts (TIMESTAMP as ISO text without zone, UTC wall
// clock; BIGINT as a number) and frozen; one handle scans its snapshot at most once (cached).
// Invariant: every read of a handle is of the same snapshot (`snapshotId`), in the same columns:
// the table's latest schema when the handle was made. A handle is the state "now" — the snapshot
// is pinned by id only so that its reads agree — so it reads in today's columns, also when that
// snapshot was committed before an ALTER no commit has followed yet (not time travel, which would
// read in the snapshot's own: core/lsm ReadPoint). `changesSince` (Table.changes) is in them too.

import { LsmError, valueFromJson, valueToJson, type Predicate, type Table } from '../lsm/index.ts';
import type { Json } from '../inbox/index.ts';
import { AgentError } from './errors.ts';

export type Row = Readonly<Record<string, Json>>;
export type ChangeKind = '+I' | '-U' | '+U' | '-D';
export interface RowChange {
  readonly kind: ChangeKind;
  readonly row: Row;
}

export interface ReadOnlyTable {
  /** The table's name in its database, e.g. `stock`. */
  readonly name: string;
  /** The snapshot every read of this handle sees; null when the table had none. */
  readonly snapshotId: number | null;
  readonly primaryKeys: readonly string[];
  readonly columns: readonly string[];
  /** Every row (or those matching `where`), in key order. */
  scan(where?: readonly Predicate[]): readonly Row[];
  /** The row of one primary key (JSON forms), or undefined. */
  get(key: Readonly<Record<string, Json>>): Row | undefined;
  /**
   * The row of one primary key at an earlier snapshot of the table (`snapshotId`, at most this
   * handle's), in this handle's columns: undefined when the key had no row there, null when that
   * snapshot has expired (nothing can be said of it).
   */
  getAt(snapshotId: number, key: Readonly<Record<string, Json>>): Row | undefined | null;
  /**
   * The changes from `from` (a tag name or snapshot id; null = the empty table) to this handle's
   * snapshot, one per changed key: +I, -U/+U pairs, -D (Table.changes, mode `diff`).
   */
  changesSince(from: string | number | null): readonly RowChange[];
  /**
   * The versions of one key that the commits after snapshot `from` up to this handle's snapshot
   * wrote, oldest first: one per commit that wrote the key, as that commit left it (Table.changes,
   * mode `delta`; compactions add none). Values a key held only between two events of one commit
   * are not among them. Undefined when a snapshot of that range has expired (its commit can no
   * longer be read); empty when `from` is this snapshot or later.
   */
  versionsSince(from: number, key: Readonly<Record<string, Json>>): readonly RowChange[] | undefined;
  /**
   * The snapshot id a tag of the table points at (the previous run's `agent-<run id>`), or
   * undefined when the table has no such tag: whether that state came before or after another
   * (stock-reorder's `newOccurrence`: the baseline after the snapshot an approval checked).
   */
  tagSnapshotId(tag: string): number | undefined;
  /** The row's primary key as a record. */
  keyOf(row: Row): Record<string, Json>;
}

/** Names of Table and TableWriter members that change something, or lead to something that does. */
const FORBIDDEN = new Set([
  'newWriter', 'createTag', 'deleteTag', 'alter', 'expireUnderLock', 'removeOrphansUnderLock',
  'write', 'writeRecord', 'commit', 'flush', 'compact', 'expire', 'rollbackTo', 'removeOrphanFiles',
  'tags', 'snapshots', 'manifests', 'fileIO', 'paths', 'cache', 'follow', 'pinSnapshot', 'table',
]);

const EMPTY_CHANGES: readonly RowChange[] = Object.freeze([]);

const refuse = (what: string): never => {
  throw new AgentError('ReadOnly', `a rule's table handle is read-only: ${what} is not available (agents write proposals, never state)`);
};

/**
 * Full scans kept between handles of the same table (the Agent keeps one per table across runs):
 * a snapshot never changes, so a later handle on the same snapshot (and schema) reuses the frozen
 * rows instead of reading and converting them again. Holds one snapshot's rows at a time.
 */
export interface ScanCache {
  key?: string;
  rows?: readonly Row[];
  /** The rows by primary key (indexKey), built from `rows` once a snapshot sees enough point lookups. */
  byKey?: Map<string, Row>;
  /** Point lookups on this snapshot so far. */
  gets?: number;
  /**
   * The full scan of the snapshot scanned before `key` (its `key` and rows): `changesSince` that
   * snapshot is then a comparison of two scans in memory instead of a read of both states.
   */
  prevKey?: string;
  prevRows?: readonly Row[];
  /** `byKey` of that snapshot, when it was built. */
  prevByKey?: Map<string, Row>;
  /**
   * `versionsSince` answers by `<schema id>/<from>/<key>`: the versions read up to snapshot `to`.
   * A later handle reads only the commits after `to` (the write-back asks every second while a
   * command waits for its effect; a re-read of the whole range each time grew with it). Kept
   * across snapshots; at most VERSIONS_KEPT_MAX entries.
   */
  versions?: Map<string, { to: number; list: readonly RowChange[] }>;
}

/** `ScanCache.versions` entries beyond which the map starts anew (one per command awaiting its effect). */
const VERSIONS_KEPT_MAX = 256;

/**
 * After this many `get`s on one snapshot, lookups go through an index of the full scan instead of a
 * reader each: one scan of the snapshot (thousands of rows, milliseconds) is then cheaper than
 * opening a reader per key (each resolves the bucket's files anew). Re-checking the open proposals
 * after every run does one lookup per proposal.
 */
const INDEX_AFTER_GETS = 8;

const STRING_ROOTS = new Set(['STRING', 'VARCHAR']);
const INTEGER_ROOTS = new Set(['TINYINT', 'SMALLINT', 'INT', 'BIGINT']);
/** Types whose valueToJson is the value itself (null for null/undefined): see core/lsm/types.ts. */
const SAME_IN_JSON_ROOTS = new Set(['STRING', 'VARCHAR', 'CHAR', 'BOOLEAN', 'TINYINT', 'SMALLINT', 'INT']);
/**
 * Column types whose JSON form (valueToJson) is equal (===) exactly when core/lsm's valuesEqual
 * says the stored values are: a diff of two scans in JSON form then finds the changes Table.changes
 * finds. Not TIMESTAMP/TIME (the text is cut at the precision; the stored value is not), and not
 * binary or nested types (their JSON forms are objects or re-encodings): those go to Table.changes.
 */
const DIFFABLE_ROOTS = new Set(['STRING', 'VARCHAR', 'CHAR', 'BOOLEAN', 'TINYINT', 'SMALLINT', 'INT', 'BIGINT', 'DECIMAL', 'DATE', 'FLOAT', 'DOUBLE']);

/**
 * A read-only handle on `table` at `snapshotId` (default: the latest snapshot now; a caller passes
 * the latest it found), in the table's latest columns (see the invariant above).
 */
export function readOnlyTable(table: Table, name: string, snapshotId?: number, cache?: ScanCache): ReadOnlyTable {
  const snapshot = table.resolve(snapshotId === undefined ? {} : { snapshotId });
  const id = snapshot?.id ?? null;
  const schema = table.schema;
  const cacheKey = `${id}/${schema.id}`;
  if (cache && cache.key !== cacheKey) {
    // The scanned rows of the snapshot left behind stay as the base of the next changesSince.
    if (cache.key !== undefined && cache.rows !== undefined) {
      cache.prevKey = cache.key;
      cache.prevRows = cache.rows;
      cache.prevByKey = cache.byKey;
    }
    cache.key = cacheKey;
    cache.rows = undefined;
    cache.byKey = undefined;
    cache.gets = 0;
  }
  // The shared cache serves this handle while it holds this snapshot; a handle that outlives it
  // (a newer handle re-keyed the cache) falls back to its own state.
  const own: ScanCache = { key: cacheKey };
  const st = (): ScanCache => (cache && cache.key === cacheKey ? cache : own);
  const fields = schema.fields;
  const keyFields = schema.primaryKeys.map((k) => fields[schema.fieldIndex.get(k)!]!);
  // The index is used only for keys whose JSON form is the rows' own (text for STRING/VARCHAR
  // columns, a safe integer for integer columns): equal text means the same key, and a key absent
  // from the full scan is absent from the snapshot. Any other form goes to the reader, as before.
  const indexable = keyFields.every((f) => STRING_ROOTS.has(f.type.root) || INTEGER_ROOTS.has(f.type.root));
  const indexKey = (key: Readonly<Record<string, Json>>): string | undefined => {
    const parts: Json[] = [];
    for (const f of keyFields) {
      const v = key[f.name];
      if (STRING_ROOTS.has(f.type.root) ? typeof v !== 'string' : !Number.isSafeInteger(v)) return undefined;
      parts.push(v as Json);
    }
    return JSON.stringify(parts);
  };
  const rowKey = (row: Row): string => JSON.stringify(keyFields.map((f) => row[f.name] ?? null));
  // Table.changes(mode diff) of a primary-key table with one bucket and no partitions lists the
  // changed keys in key order, the order of a full scan of that bucket; see changesSince.
  const diffable = schema.isPrimaryKeyTable && schema.partitionKeys.length === 0 && schema.options.bucket === 1 && fields.every((f) => DIFFABLE_ROOTS.has(f.type.root));
  // Per column, its JSON conversion; columns whose memory form is already their JSON form (text,
  // 32-bit and smaller integers, booleans) are copied as they are (a full scan converts every row).
  const names = fields.map((f) => f.name);
  const convert = fields.map((f) => (SAME_IN_JSON_ROOTS.has(f.type.root) ? undefined : f.type));
  const toRow = (row: readonly unknown[]): Row => {
    const r: Record<string, Json> = {};
    for (let i = 0; i < names.length; i++) {
      const t = convert[i];
      const v = row[i];
      r[names[i]!] = (t === undefined ? (v ?? null) : valueToJson(t, v)) as Json;
    }
    return Object.freeze(r);
  };
  // A key in JSON forms as a reader takes it (BIGINT as bigint).
  // Every key column from the JSON form rules see to the stored form (a BIGINT as bigint, a DATE,
  // TIMESTAMP or DECIMAL from its text): core/lsm's get refuses a value of another kind, and only
  // BIGINT was converted, so a lookup in a table keyed by a date failed the rule.
  const storedKey = (key: Readonly<Record<string, Json>>): Record<string, unknown> => {
    const pk: Record<string, unknown> = {};
    for (const k of schema.primaryKeys) {
      const f = fields[schema.fieldIndex.get(k)!]!;
      const v = key[k];
      pk[k] = v === null || v === undefined ? v : valueFromJson(f.type, v, k);
    }
    return pk;
  };
  let all: readonly Row[] | undefined;
  const read = <T>(f: (r: ReturnType<Table['reader']>) => T): T => {
    const r = table.reader(id === null ? {} : { snapshotId: id, schemaId: schema.id });
    try {
      return f(r);
    } finally {
      r.close();
    }
  };
  const handle: ReadOnlyTable = {
    name,
    snapshotId: id,
    primaryKeys: Object.freeze([...schema.primaryKeys]),
    columns: Object.freeze(fields.map((f) => f.name)),
    scan(where) {
      if (id === null) return [];
      if (!where || where.length === 0) return (all ??= st().rows ??= Object.freeze(read((r) => [...r.scan()].map(toRow))));
      return read((r) => [...r.scan({ where: [...where] })].map(toRow));
    },
    get(key) {
      if (id === null) return undefined;
      const k = indexable ? indexKey(key) : undefined;
      const state = st();
      // With the snapshot already scanned (a rule read it whole), the index costs no read at all.
      if (k !== undefined && (state.byKey !== undefined || state.rows !== undefined || (state.gets = (state.gets ?? 0) + 1) > INDEX_AFTER_GETS)) {
        if (!state.byKey) {
          const byKey = new Map<string, Row>();
          for (const row of handle.scan()) byKey.set(rowKey(row), row);
          state.byKey = byKey;
        }
        return state.byKey.get(k);
      }
      const row = read((r) => r.get(storedKey(key)));
      return row && toRow(row);
    },
    getAt(at, key) {
      if (!Number.isSafeInteger(at) || at < 1 || id === null || at > id) {
        throw new AgentError('InvalidArgument', `getAt: expected a snapshot id from 1 to this handle's ${String(id)}, got ${String(at)}`);
      }
      if (at === id) return handle.get(key);
      // EARLIEST decides, not only what the reader finds: core/lsm reads a snapshot expired in this
      // process as NotFound, but one expired by another process while this Table object held it
      // parsed (and its plan) can meet a missing data file first, reported as Corruption
      // (core/lsm DESIGN.md, "Reads"); and a snapshot file a crashed expiration left below EARLIEST
      // is expired all the same. Reading EARLIEST also tells the snapshot cache.
      if (at < (table.snapshots.earliestId() ?? Infinity)) return null;
      let r: ReturnType<Table['reader']>;
      try {
        r = table.reader({ snapshotId: at, schemaId: schema.id });
      } catch (e) {
        // Expired between the look and the read.
        if (e instanceof LsmError && e.kind === 'NotFound') return null;
        throw e;
      }
      try {
        const row = r.get(storedKey(key));
        return row && toRow(row);
      } finally {
        r.close();
      }
    },
    changesSince(from) {
      if (id === null) return [];
      // Two equal states have no differences: a diff of a snapshot with itself is empty, so it is
      // not read (an agent run every minute mostly finds the table where the previous run left it).
      const fromId = from === null ? undefined : typeof from === 'number' ? from : table.tags.exists(from) ? table.tags.get(from).snapshot.id : undefined;
      if (fromId === id) return EMPTY_CHANGES;
      // From a tag (the agent's previous run) whose snapshot this cache scanned last time: compare
      // that scan with this snapshot's, in memory. Only without deletions: a deleted key would have
      // to be placed among the others in core/lsm's key order, which the JSON forms do not give.
      const state = st();
      if (diffable && typeof from === 'string' && fromId !== undefined && state.prevKey === `${fromId}/${schema.id}` && state.prevRows !== undefined) {
        let before = state.prevByKey;
        if (!before) {
          before = new Map<string, Row>();
          for (const r of state.prevRows) before.set(rowKey(r), r);
          state.prevByKey = before;
        }
        // This snapshot's index comes out of the same pass (the lookups of this run use it).
        const byKey = new Map<string, Row>();
        const out: RowChange[] = [];
        for (const r of handle.scan()) {
          const k = rowKey(r);
          byKey.set(k, r);
          const b = before.get(k);
          if (b === undefined) {
            out.push(Object.freeze({ kind: '+I' as const, row: r }));
            continue;
          }
          for (const f of names) {
            if (b[f] !== r[f]) {
              out.push(Object.freeze({ kind: '-U' as const, row: b }), Object.freeze({ kind: '+U' as const, row: r }));
              break;
            }
          }
        }
        state.byKey ??= byKey;
        // Every key of the old state is in the new one (no deletions) when the counts say so.
        if (byKey.size === before.size + out.filter((c) => c.kind === '+I').length) return Object.freeze(out);
      }
      const out: RowChange[] = [];
      for (const c of table.changes({ from: from ?? 0, to: id, mode: 'diff' })) out.push(Object.freeze({ kind: c.kind, row: toRow(c.row) }));
      return Object.freeze(out);
    },
    versionsSince(from, key) {
      if (!Number.isSafeInteger(from) || from < 0) throw new AgentError('InvalidArgument', `versionsSince: expected a snapshot id ≥ 0, got ${String(from)}`);
      if (id === null || from >= id) return EMPTY_CHANGES;
      const wanted = JSON.stringify(keyFields.map((f) => key[f.name] ?? null));
      const keyIdx = keyFields.map((f) => schema.fieldIndex.get(f.name)!);
      const memoKey = `${schema.id}/${from}/${wanted}`;
      const known = cache?.versions?.get(memoKey);
      // What an earlier handle read stays true: only the commits after it are read.
      const start = known !== undefined && known.to <= id ? known.to : from;
      const out: RowChange[] = start === from ? [] : [...known!.list];
      // As in getAt, EARLIEST decides (a leftover snapshot file below it too); an expiration
      // between this look and the read is NotFound from Table.changes, caught below.
      if (start < id && start + 1 < (table.snapshots.earliestId() ?? Infinity)) return undefined;
      try {
        if (start < id) for (const c of table.changes({ from: start, to: id, mode: 'delta' })) {
          // The key's columns alone first: a commit writes many keys, the caller wants one.
          if (JSON.stringify(keyIdx.map((i, j) => valueToJson(keyFields[j]!.type, c.row[i]) ?? null)) !== wanted) continue;
          out.push(Object.freeze({ kind: c.kind, row: toRow(c.row) }));
        }
      } catch (e) {
        // A commit of the range has expired: what it wrote is gone, and a partial answer would
        // look like a whole one.
        if (e instanceof LsmError && e.kind === 'NotFound') return undefined;
        throw e;
      }
      if (cache) {
        if (cache.versions === undefined || cache.versions.size >= VERSIONS_KEPT_MAX) cache.versions = new Map();
        cache.versions.set(memoKey, { to: id, list: Object.freeze(out) });
      }
      return Object.freeze(out);
    },
    tagSnapshotId(tag) {
      return table.tags.exists(tag) ? table.tags.get(tag).snapshot.id : undefined;
    },
    keyOf(row) {
      const k: Record<string, Json> = {};
      for (const c of schema.primaryKeys) k[c] = row[c] ?? null;
      return k;
    },
  };
  return new Proxy(Object.freeze(handle), {
    get(target, prop, receiver) {
      if (typeof prop === 'string' && FORBIDDEN.has(prop)) refuse(`'${prop}'`);
      return Reflect.get(target, prop, receiver);
    },
    set: (_t, prop) => refuse(`setting '${String(prop)}'`),
    defineProperty: (_t, prop) => refuse(`defining '${String(prop)}'`),
    deleteProperty: (_t, prop) => refuse(`deleting '${String(prop)}'`),
    setPrototypeOf: () => refuse('changing the prototype'),
  });
}
