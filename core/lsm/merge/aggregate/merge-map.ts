// `merge_map` (Paimon's FieldMergeMapAgg) over MAP columns: the union of the maps; for a key in
// both, the input's (later) value wins. Keys are matched by value (types.ts `mapKeyId`, so equal
// BYTES keys are one key). Null input leaves the accumulator; a null accumulator takes the input.
//
// Retract (Paimon: "best effort"): removes the retracted map's keys from the accumulator, whatever
// their values; a null accumulator stays null. Like `collect`, a fold holding a retraction does
// not stand for its inputs when merged with older rows later (#4670): `retractFold` is `inexact`.
// Values are never mutated: every result is a new Map.

import { mapKeyId } from '../../types.ts';
import type { FieldAggregator } from './field-aggregator.ts';

export class MergeMapAggregator implements FieldAggregator {
  readonly name = 'merge_map';
  readonly ignoresNull = true;
  readonly retractFold = 'inexact' as const;

  agg(acc: unknown, input: unknown): unknown {
    if (acc === null || acc === undefined) return input ?? null;
    if (input === null || input === undefined) return acc;
    const byId = new Map<string, [unknown, unknown]>();
    for (const [k, v] of acc as Map<unknown, unknown>) byId.set(mapKeyId(k), [k, v]);
    for (const [k, v] of input as Map<unknown, unknown>) {
      const id = mapKeyId(k);
      const old = byId.get(id);
      byId.set(id, [old ? old[0] : k, v]);
    }
    return new Map([...byId.values()]);
  }

  retract(acc: unknown, input: unknown): unknown {
    if (acc === null || acc === undefined) return null;
    if (input === null || input === undefined) return acc;
    const gone = new Set<string>();
    for (const k of (input as Map<unknown, unknown>).keys()) gone.add(mapKeyId(k));
    return new Map([...(acc as Map<unknown, unknown>)].filter(([k]) => !gone.has(mapKeyId(k))));
  }
}
