// Exact arithmetic for sum and product: integer results must fit the column type (TINYINT,
// SMALLINT, INT as numbers; BIGINT as a 64-bit bigint), DECIMAL results its precision (unscaled
// bigints, the scale is the type's). FLOAT rounds to single precision, DOUBLE is plain.
// An overflow is an InvalidArgument naming the column (Paimon #7992).

import { invalidArgument } from '../../errors.ts';
import { typeToString, type DataType } from '../../types.ts';

const RANGE: Record<string, [number, number]> = {
  TINYINT: [-128, 127],
  SMALLINT: [-32768, 32767],
  INT: [-2147483648, 2147483647],
};
const BIGINT_MIN = -(2n ** 63n);
const BIGINT_MAX = 2n ** 63n - 1n;

export type Op = 'add' | 'sub' | 'mul' | 'div';

/** a op b in the column's type; throws on overflow or division by zero. */
export function arith(type: DataType, column: string, fn: string, op: Op, a: unknown, b: unknown): unknown {
  const overflow = () => invalidArgument(`column '${column}' (${typeToString(type)}): ${fn} overflows the column type`);
  switch (type.root) {
    case 'TINYINT':
    case 'SMALLINT':
    case 'INT': {
      const x = a as number;
      const y = b as number;
      if (op === 'div' && y === 0) throw invalidArgument(`column '${column}': ${fn} cannot retract 0 (division by zero)`);
      const r = op === 'add' ? x + y : op === 'sub' ? x - y : op === 'mul' ? x * y : Math.trunc(x / y);
      const [lo, hi] = RANGE[type.root]!;
      // x * y of two INTs may pass 2^53; check with bigints then.
      if (op === 'mul' && !Number.isSafeInteger(r)) throw overflow();
      if (r < lo || r > hi) throw overflow();
      return r === 0 ? 0 : r;
    }
    case 'BIGINT': {
      const x = a as bigint;
      const y = b as bigint;
      if (op === 'div' && y === 0n) throw invalidArgument(`column '${column}': ${fn} cannot retract 0 (division by zero)`);
      const r = op === 'add' ? x + y : op === 'sub' ? x - y : op === 'mul' ? x * y : x / y;
      if (r < BIGINT_MIN || r > BIGINT_MAX) throw overflow();
      return r;
    }
    case 'DECIMAL': {
      const x = a as bigint;
      const y = b as bigint;
      const scale = 10n ** BigInt(type.scale!);
      let r: bigint;
      if (op === 'add') r = x + y;
      else if (op === 'sub') r = x - y;
      else if (op === 'mul') r = divHalfUp(x * y, scale);
      else {
        if (y === 0n) throw invalidArgument(`column '${column}': ${fn} cannot retract 0 (division by zero)`);
        r = divHalfUp(x * scale, y);
      }
      const limit = 10n ** BigInt(type.precision!);
      if (r >= limit || r <= -limit) throw overflow();
      return r;
    }
    case 'FLOAT':
    case 'DOUBLE': {
      const x = a as number;
      const y = b as number;
      const r = op === 'add' ? x + y : op === 'sub' ? x - y : op === 'mul' ? x * y : x / y;
      return type.root === 'FLOAT' ? Math.fround(r) : r;
    }
    default:
      throw new Error(`assertion failed: ${fn} on ${typeToString(type)}`);
  }
}

/** n / d rounded half away from zero (Java's RoundingMode.HALF_UP). */
function divHalfUp(n: bigint, d: bigint): bigint {
  const neg = n < 0n !== d < 0n;
  const an = n < 0n ? -n : n;
  const ad = d < 0n ? -d : d;
  let q = an / ad;
  if ((an % ad) * 2n >= ad) q += 1n;
  return neg ? -q : q;
}

/** -x in the column's type (sum's retraction into a null accumulator). */
export function negate(type: DataType, column: string, x: unknown): unknown {
  if (typeof x === 'bigint') return arith(type, column, 'sum', 'sub', 0n, x);
  return arith(type, column, 'sum', 'sub', 0, x);
}
