// Test-only pieces shared by the randomized changelog tests (changelog.model.test.ts for the lookup
// producer, changelog-full.model.test.ts for full-compaction): the table's columns, states as maps
// of encoded rows, the strict fold of a changelog onto a state, and the row generators of the
// scenarios. NOT for production code.

import type { Change } from '../incremental.ts';

export const enc = (v: unknown) => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? `${x}n` : x));
/** Table columns: item, loc, p (key, p partitions), then values. */
export const keyOf = (row: unknown[]) => enc([row[0], row[1], row[2]]);
export type State = Map<string, string>;

export function stateOf(rows: unknown[][]): State {
  return new Map(rows.map((r) => [keyOf(r), enc(r)]));
}

/**
 * Applies changes strictly: +I needs an absent key, -U/-D the exact current row, +U the -U just
 * before it, and no -U may be left without its +U. Returns an error text or undefined.
 */
export function applyChanges(state: State, changes: Iterable<Change>): string | undefined {
  let pendingBefore: string | undefined;
  for (const c of changes) {
    const k = keyOf(c.row);
    const row = enc(c.row);
    const cur = state.get(k);
    switch (c.kind) {
      case '+I':
        if (cur !== undefined) return `+I of present key ${k} (has ${cur})`;
        state.set(k, row);
        break;
      case '-U':
      case '-D':
        if (cur !== row) return `${c.kind} ${row} but the key holds ${cur}`;
        state.delete(k);
        if (c.kind === '-U') pendingBefore = k;
        break;
      case '+U':
        if (cur !== undefined) return `+U of present key ${k}`;
        if (pendingBefore !== k) return `+U of ${k} without its -U`;
        pendingBefore = undefined;
        state.set(k, row);
        break;
    }
  }
  return pendingBefore === undefined ? undefined : `-U of ${pendingBefore} without its +U`;
}

export type Rnd = () => number;
export type Row = Record<string, unknown>;

export interface Scenario {
  name: string;
  options: Record<string, string>;
  row: (r: Rnd, key: Row, n: number) => Row;
  deleteRow: (r: Rnd, key: Row) => Row;
}

export const FIELDS = [
  { name: 'item', type: 'STRING NOT NULL' },
  { name: 'loc', type: 'INT NOT NULL' },
  { name: 'p', type: 'INT NOT NULL' },
  { name: 'on_hand', type: 'INT' },
  { name: 'inv_seq', type: 'BIGINT' },
  { name: 'reserved', type: 'INT' },
  { name: 'com_seq', type: 'BIGINT' },
  { name: 'note', type: 'STRING' },
];

/** Small options that make flushes and compactions frequent, for `producer`. */
export function smallOptions(producer: string): Record<string, string> {
  return {
    bucket: '2',
    'write-buffer-size': '3 kb',
    'num-sorted-run.compaction-trigger': '3',
    'snapshot.num-retained.min': '25',
    'snapshot.time-retained': '1 s',
    'changelog-producer': producer,
  };
}

const maybe = (r: Rnd, v: unknown) => (r() < 0.3 ? null : v);

// Small value domains, so a write often leaves the value unchanged (row-deduplicate matters, and
// a key often ends a full-compaction interval unchanged).
export const anyRow = (r: Rnd, key: Row): Row => ({
  ...key,
  on_hand: maybe(r, Math.floor(r() * 3)),
  inv_seq: BigInt(Math.floor(r() * 3)),
  reserved: maybe(r, Math.floor(r() * 3)),
  com_seq: 1n,
  note: r() < 0.5 ? null : 'n',
});

/** Partial-update with a sequence group per module. */
export const GROUPS = {
  'merge-engine': 'partial-update',
  'fields.inv_seq.sequence-group': 'on_hand',
  'fields.com_seq.sequence-group': 'reserved',
};

export const groupRow = (r: Rnd, key: Row, n: number): Row => {
  const which = r();
  if (which < 0.45) return { ...key, on_hand: maybe(r, Math.floor(r() * 3)), inv_seq: BigInt(Math.floor(r() * 20)) };
  if (which < 0.9) return { ...key, reserved: maybe(r, Math.floor(r() * 3)), com_seq: BigInt(Math.floor(r() * 20)) };
  return { ...key, note: `n${n % 2}` };
};

export const groupDelete = (r: Rnd, key: Row): Row =>
  r() < 0.5 ? { ...key, inv_seq: BigInt(Math.floor(r() * 20)) } : { ...key, com_seq: BigInt(Math.floor(r() * 20)) };

export const aggRow = (r: Rnd, key: Row): Row => ({
  ...key,
  on_hand: Math.floor(r() * 3) - 1,
  reserved: maybe(r, Math.floor(r() * 3)),
  note: r() < 0.5 ? null : `n${Math.floor(r() * 2)}`,
});

export const deleteKey = (_r: Rnd, key: Row): Row => ({ ...key });
