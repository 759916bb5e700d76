// Test-only: a plain in-memory model of Paimon's aggregate functions and of the aggregation merge
// engine, written from the specification (/work/shared/paimon-features.md §1) and NOT from
// core/lsm/merge: no production merge code is called here. Used by the model tests.
//
// `aggregationFold` is the engine's fold of a key's records, the same whatever their number. What
// a read gives of a key whose only record is a retraction (no row, as Java's reader passes a lone
// record on and drops it; merge/README.md, "A key's lone record") is the read's rule, not the
// engine's: model.ts's `readOutcomes` applies it for every engine, together with what a
// compaction may have made of such a record.

import { RowKind } from '../key-value.ts';
import { anyOf, isNull, isRetract, KEYS, ModelError, type ModelFold, type Rec, type Row } from './model.ts';

/** Value kinds of the model (memory forms: INT-like numbers, BIGINT/DECIMAL unscaled bigints, …). */
export type Kind =
  | { t: 'int'; bits: 8 | 16 | 32 }
  | { t: 'bigint' }
  | { t: 'decimal'; precision: number; scale: number }
  | { t: 'double' }
  | { t: 'float' }
  | { t: 'string'; maxLength?: number }
  | { t: 'bool' }
  | { t: 'array' }
  | { t: 'map' };

export interface ColModel {
  fn: string;
  kind: Kind;
  ignoreRetract?: boolean;
  delimiter?: string;
  distinct?: boolean;
}

/** Structural identity of a value (for collect/merge_map equality). */
export function ident(v: unknown): string {
  return JSON.stringify(v, (_k, x) =>
    typeof x === 'bigint' ? `${x}n`
    : x instanceof Map ? { m: [...x].sort((a, b) => (ident(a[0]) < ident(b[0]) ? -1 : 1)) }
    : x instanceof Uint8Array ? { b: [...x] }
    : x === undefined ? null
    : x,
  );
}

const utf8 = (s: string) => Buffer.from(s, 'utf8');
/** -1/0/1 by the SQL order of the kind (strings by UTF-8 bytes, false < true). */
function order(kind: Kind, a: unknown, b: unknown): number {
  switch (kind.t) {
    case 'string':
      return Buffer.compare(utf8(a as string), utf8(b as string));
    case 'bool':
      return Number(a) - Number(b);
    default:
      return a === b ? 0 : (a as number) < (b as number) ? -1 : 1;
  }
}

const overflow = (col: string) => new ModelError(new RegExp(`column '${col}' \\(.*\\): (sum|product) overflows`));

/** The exact result in the kind, or a ModelError on overflow. */
function fit(kind: Kind, col: string, v: unknown): unknown {
  if (kind.t === 'int') {
    const lim = 2 ** (kind.bits - 1);
    if ((v as number) < -lim || (v as number) >= lim) throw overflow(col);
    return v;
  }
  if (kind.t === 'bigint') {
    if ((v as bigint) < -(2n ** 63n) || (v as bigint) >= 2n ** 63n) throw overflow(col);
    return v;
  }
  if (kind.t === 'decimal') {
    const lim = 10n ** BigInt(kind.precision);
    if ((v as bigint) <= -lim || (v as bigint) >= lim) throw overflow(col);
    return v;
  }
  if (kind.t === 'float') return Math.fround(v as number);
  return v;
}

/** Rounds n/d half away from zero. */
function roundDiv(n: bigint, d: bigint): bigint {
  const neg = (n < 0n) !== (d < 0n);
  const an = n < 0n ? -n : n;
  const ad = d < 0n ? -d : d;
  const q = (2n * an + ad) / (2n * ad);
  return neg ? -q : q;
}

function add(kind: Kind, col: string, a: unknown, b: unknown, sign: 1 | -1): unknown {
  if (typeof a === 'bigint') return fit(kind, col, sign === 1 ? a + (b as bigint) : a - (b as bigint));
  return fit(kind, col, sign === 1 ? (a as number) + (b as number) : (a as number) - (b as number));
}
function mul(kind: Kind, col: string, a: unknown, b: unknown): unknown {
  if (kind.t === 'decimal') return fit(kind, col, roundDiv((a as bigint) * (b as bigint), 10n ** BigInt(kind.scale)));
  if (typeof a === 'bigint') return fit(kind, col, a * (b as bigint));
  return fit(kind, col, (a as number) * (b as number));
}
function div(kind: Kind, col: string, a: unknown, b: unknown): unknown {
  if (kind.t === 'decimal') return fit(kind, col, roundDiv((a as bigint) * 10n ** BigInt(kind.scale), b as bigint));
  if (typeof a === 'bigint') return fit(kind, col, a / (b as bigint));
  if (kind.t === 'int') return fit(kind, col, Math.trunc((a as number) / (b as number)));
  return fit(kind, col, (a as number) / (b as number));
}

/** One column's state while folding a key. */
interface ColState {
  acc: unknown;
  /** first_value: an input was taken. */
  seen: boolean;
}

/** agg(acc, input) of one function, plainly. Mutates `s`. */
export function modelAgg(c: ColModel, col: string, s: ColState, v: unknown): void {
  const acc = s.acc;
  switch (c.fn) {
    case 'sum':
      if (!isNull(v)) s.acc = isNull(acc) ? fit(c.kind, col, v) : add(c.kind, col, acc, v, 1);
      return;
    case 'product':
      if (!isNull(v)) s.acc = isNull(acc) ? v : mul(c.kind, col, acc, v);
      return;
    case 'max':
      if (!isNull(v) && (isNull(acc) || order(c.kind, v, acc) > 0)) s.acc = v;
      return;
    case 'min':
      if (!isNull(v) && (isNull(acc) || order(c.kind, v, acc) < 0)) s.acc = v;
      return;
    case 'last_value':
      s.acc = v ?? null;
      return;
    case 'last_non_null_value':
      if (!isNull(v)) s.acc = v;
      return;
    case 'first_value':
      if (!s.seen) s.acc = v ?? null;
      s.seen = true;
      return;
    case 'first_non_null_value':
      if (isNull(acc)) s.acc = v ?? null;
      return;
    case 'bool_and':
      if (!isNull(v)) s.acc = isNull(acc) ? v : acc === true && v === true;
      return;
    case 'bool_or':
      if (!isNull(v)) s.acc = isNull(acc) ? v : acc === true || v === true;
      return;
    case 'listagg': {
      const blank = (x: unknown) => isNull(x) || (x as string).trim() === '';
      if (blank(v)) return;
      if (blank(acc)) {
        s.acc = v;
        return;
      }
      const d = c.delimiter ?? ',';
      let out: string;
      if (!c.distinct) out = `${acc as string}${d}${v as string}`;
      else {
        const have = new Set((acc as string).split(d));
        out = acc as string;
        for (const t of (v as string).split(d)) {
          if (t.trim() === '' || have.has(t)) continue;
          have.add(t);
          out += d + t;
        }
      }
      if (c.kind.t === 'string' && c.kind.maxLength !== undefined && out.length > c.kind.maxLength) {
        throw new ModelError(new RegExp(`column '${col}' \\(VARCHAR\\(${c.kind.maxLength}\\)\\): listagg`));
      }
      s.acc = out;
      return;
    }
    case 'collect': {
      if (isNull(v) && isNull(acc)) return;
      const all = [...((acc as unknown[] | null) ?? []), ...((v as unknown[] | null) ?? [])];
      if (!c.distinct) {
        if (isNull(v)) return;
        s.acc = all;
        return;
      }
      const seen = new Set<string>();
      s.acc = all.filter((e) => {
        const id = ident(e);
        if (seen.has(id)) return false;
        seen.add(id);
        return true;
      });
      return;
    }
    case 'merge_map': {
      if (isNull(v)) return;
      const out = new Map<string, [unknown, unknown]>();
      for (const m of [acc, v]) {
        if (isNull(m)) continue;
        for (const [k, x] of m as Map<unknown, unknown>) {
          const id = ident(k);
          out.set(id, [out.get(id)?.[0] ?? k, x]);
        }
      }
      s.acc = new Map([...out.values()]);
      return;
    }
    default:
      throw new Error(`model: unknown function ${c.fn}`);
  }
}

/** Functions Paimon can retract. */
export const RETRACTABLE = new Set(['sum', 'product', 'last_value', 'last_non_null_value', 'collect', 'merge_map']);

/** retract(acc, input), plainly. Mutates `s`. */
export function modelRetract(c: ColModel, col: string, s: ColState, v: unknown): void {
  if (c.ignoreRetract) {
    // An ignored retraction changes no value, but it does create the row (all nulls), and in
    // that row first_value has taken its (null) input: later adds do not replace it.
    if (c.fn === 'first_value') s.seen = true;
    return;
  }
  const acc = s.acc;
  switch (c.fn) {
    case 'sum':
      if (!isNull(v)) s.acc = isNull(acc) ? fit(c.kind, col, typeof v === 'bigint' ? -v : -(v as number)) : add(c.kind, col, acc, v, -1);
      return;
    case 'product':
      if (!isNull(v) && !isNull(acc)) s.acc = div(c.kind, col, acc, v);
      return;
    case 'last_value':
      s.acc = null;
      return;
    case 'last_non_null_value':
      if (!isNull(v)) s.acc = null;
      return;
    case 'collect': {
      if (isNull(acc) || isNull(v)) return;
      const out = [...(acc as unknown[])];
      for (const e of v as unknown[]) {
        const at = out.findIndex((x) => ident(x) === ident(e));
        if (at >= 0) out.splice(at, 1);
      }
      s.acc = out;
      return;
    }
    case 'merge_map': {
      if (isNull(acc) || isNull(v)) return;
      const gone = new Set([...(v as Map<unknown, unknown>).keys()].map(ident));
      s.acc = new Map([...(acc as Map<unknown, unknown>)].filter(([k]) => !gone.has(ident(k))));
      return;
    }
    default:
      throw new Error(`model: ${c.fn} cannot retract; the generator must not produce this`);
  }
}

/** The retraction error the table must raise at write time for a column that cannot retract. */
export function refusal(col: string, fn: string): RegExp {
  return new RegExp(`cannot take a -[UD] record: column '${col}': aggregate function '${fn}' cannot retract`);
}

export interface AggEngineOptions {
  removeRecordOnDelete?: boolean;
  ignoreDelete?: boolean;
}

/** The aggregation merge engine: every column folds the key's records in write order. */
export function aggregationFold(cols: Record<string, ColModel>, o: AggEngineOptions = {}): ModelFold {
  const names = Object.keys(cols);
  return (history: Rec[]) => {
    let row: Row | undefined;
    let st: Record<string, ColState> = {};
    const fresh = (r: Rec): Row => {
      st = Object.fromEntries(names.map((c) => [c, { acc: null, seen: false }]));
      return Object.fromEntries(KEYS.map((k) => [k, r.row[k]]));
    };
    // A column that overflows is noted and not folded further: which overflowing column (or key)
    // the table reports first depends on how its files group the records (a partial product of
    // later records can overflow before the sequential fold reaches an earlier column's overflow),
    // so the model accepts any column that overflows at all.
    const failed: ModelError[] = [];
    const failedCols = new Set<string>();
    const each = (f: (c: string) => void) => {
      for (const c of names) {
        if (failedCols.has(c)) continue;
        try {
          f(c);
        } catch (e) {
          if (!(e instanceof ModelError)) throw e;
          failedCols.add(c);
          failed.push(e);
        }
      }
    };
    for (const r of history) {
      if (isRetract(r.kind)) {
        if (o.ignoreDelete) continue;
        if (o.removeRecordOnDelete && r.kind === RowKind.DELETE) {
          row = undefined;
          continue;
        }
        row ??= fresh(r);
        each((c) => modelRetract(cols[c]!, c, st[c]!, r.row[c]));
        continue;
      }
      row ??= fresh(r);
      each((c) => modelAgg(cols[c]!, c, st[c]!, r.row[c]));
    }
    if (failed.length > 0) throw anyOf(failed);
    if (row === undefined) return undefined;
    for (const c of names) row[c] = st[c]!.acc;
    return row;
  };
}
