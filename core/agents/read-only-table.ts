// ReadOnlyTable: what a rule gets instead of a Table — one snapshot of one table, readable and
// nothing else. No writer, no tags, no expiration, no way back to the Table.
//
// Read-only by type: the interface has only `scan`, `get`, `changesSince` and a few names.
// Read-only at runtime: the handle is a frozen object behind a Proxy whose closures hold the
// Table; it has no property that leads to it, and naming any Table or TableWriter mutator on it
// (`newWriter`, `createTag`, `deleteTag`, `write`, `commit`, …, also through a cast) throws
// AgentError('ReadOnly'), as does setting or defining any property.
//
// Rows are in the JSON forms of core/lsm/types.ts (TIMESTAMP as ISO text without zone, UTC wall
// clock; BIGINT as a number) and frozen; one handle scans its snapshot at most once (cached).
// Invariant: every read of a handle is of the same snapshot (`snapshotId`).

import { valueToJson, type Predicate, type Table } from '../lsm/index.ts';
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
   * The changes from `from` (a tag name or snapshot id; null = the empty table) to this handle's
   * snapshot, one per changed key: +I, -U/+U pairs, -D (Table.changes, mode `diff`).
   */
  changesSince(from: string | number | null): readonly RowChange[];
  /** The row's primary key as a record. */
  keyOf(row: Row): Record<string, Json>;
}

/** Names of Table and TableWriter members that change something, or lead to something that does. */
const FORBIDDEN = new Set([
  'newWriter', 'createTag', 'deleteTag', 'alter', 'expireUnderLock', 'removeOrphansUnderLock',
  'write', 'writeRecord', 'commit', 'flush', 'compact', 'expire', 'rollbackTo', 'removeOrphanFiles',
  'tags', 'snapshots', 'manifests', 'fileIO', 'paths', 'cache', 'follow', 'pin', 'unpin', 'table',
]);

const refuse = (what: string): never => {
  throw new AgentError('ReadOnly', `a rule's table handle is read-only: ${what} is not available (agents write proposals, never state)`);
};

/** A read-only handle on `table` at `snapshotId` (default: the latest snapshot now). */
export function readOnlyTable(table: Table, name: string, snapshotId?: number): ReadOnlyTable {
  const snapshot = table.resolve(snapshotId === undefined ? {} : { snapshotId });
  const id = snapshot?.id ?? null;
  const schema = table.schema;
  const fields = schema.fields;
  const toRow = (row: readonly unknown[]): Row => {
    const r: Record<string, Json> = {};
    fields.forEach((f, i) => (r[f.name] = valueToJson(f.type, row[i]) as Json));
    return Object.freeze(r);
  };
  let all: readonly Row[] | undefined;
  const read = <T>(f: (r: ReturnType<Table['reader']>) => T): T => {
    const r = table.reader(id === null ? {} : { snapshotId: id });
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
      if (!where || where.length === 0) return (all ??= Object.freeze(read((r) => [...r.scan()].map(toRow))));
      return read((r) => [...r.scan({ where: [...where] })].map(toRow));
    },
    get(key) {
      if (id === null) return undefined;
      const pk: Record<string, unknown> = {};
      for (const k of schema.primaryKeys) {
        const f = fields[schema.fieldIndex.get(k)!]!;
        const v = key[k];
        pk[k] = f.type.root === 'BIGINT' && v !== null && v !== undefined ? BigInt(v as number | string) : v;
      }
      const row = read((r) => r.get(pk));
      return row && toRow(row);
    },
    changesSince(from) {
      if (id === null) return [];
      const out: RowChange[] = [];
      for (const c of table.changes({ from: from ?? 0, to: id, mode: 'diff' })) out.push(Object.freeze({ kind: c.kind, row: toRow(c.row) }));
      return Object.freeze(out);
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
