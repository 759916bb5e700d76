// A table schema as an earlier version of this store made it, for tests of tables that must still
// open, read and write although creation refuses them now: deletion vectors beside
// `changelog-producer` = full-compaction or `merge-engine` = first-row (Paimon refuses both pairs,
// options.ts checkDeletionVectorsPairs). The schema is created without `late` options, which are
// then set unchecked, as in a schema file read from disk.

import { TableSchema, type SchemaSpec } from '../schema.ts';

export function earlierSchema(spec: SchemaSpec, late: readonly string[] = ['deletion-vectors.enabled'], nowMillis = 0): TableSchema {
  const options = { ...(spec.options ?? {}) };
  const set: Record<string, string> = {};
  for (const k of late) {
    if (options[k] === undefined) continue;
    set[k] = String(options[k]);
    delete options[k];
  }
  const json = TableSchema.fromSpec({ ...spec, options }, nowMillis).toJson();
  return new TableSchema({ ...json, options: { ...json.options, ...set } }, false);
}
