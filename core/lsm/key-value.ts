// One record of a primary-key table as the LSM sees it: the trimmed key, the system sequence
// number, the row kind and the full row (every column of the schema, in schema order).
// Invariant: within a bucket `seq` grows strictly with input order.

export const RowKind = { INSERT: 0, UPDATE_BEFORE: 1, UPDATE_AFTER: 2, DELETE: 3 } as const;
export type RowKind = (typeof RowKind)[keyof typeof RowKind];

export const ROW_KIND_TEXT = ['+I', '-U', '+U', '-D'] as const;
export type RowKindText = (typeof ROW_KIND_TEXT)[number];

export function parseRowKind(text: string): RowKind {
  const i = (ROW_KIND_TEXT as readonly string[]).indexOf(text);
  if (i < 0) throw new Error(`unknown row kind '${text}', expected +I, -U, +U or -D`);
  return i as RowKind;
}

export const isAdd = (kind: number): boolean => kind === RowKind.INSERT || kind === RowKind.UPDATE_AFTER;
export const isRetract = (kind: number): boolean => kind === RowKind.UPDATE_BEFORE || kind === RowKind.DELETE;

export interface KeyValue {
  key: unknown[];
  seq: number;
  kind: RowKind;
  /** All columns of the table in schema order (key and partition columns included). */
  value: unknown[];
}
