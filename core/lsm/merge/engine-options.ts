// Table-creation (and open) checks of the merge-engine options that belong to one engine:
// aggregate functions and their per-column options, `aggregation.remove-record-on-delete`,
// and the restrictions of `first-row`. Called from TableSchema.validate.

import { invalidArgument } from '../errors.ts';
import type { TableSchema } from '../schema.ts';
import { aggregationColumns } from './aggregation.ts';
import { checkFieldOptionBooleans, checkFieldOptionColumns } from './field-options.ts';
import { partialUpdateAggregators } from './partial-update.ts';

export function validateMergeEngineOptions(schema: TableSchema, strict = false): void {
  const o = schema.options;
  const raw = o.raw;
  const engine = o.mergeEngine;
  checkFieldOptionColumns(schema);
  if (strict) checkFieldOptionBooleans(raw, Object.keys(raw));
  const removeOnDelete = raw['aggregation.remove-record-on-delete'];
  if (removeOnDelete !== undefined) {
    const t = removeOnDelete.trim().toLowerCase();
    if (t !== 'true' && t !== 'false') {
      throw invalidArgument(`option 'aggregation.remove-record-on-delete': expected 'true' or 'false', got '${removeOnDelete}'`);
    }
    if (t === 'true' && engine !== 'aggregation') throw invalidArgument(`option 'aggregation.remove-record-on-delete' needs merge-engine 'aggregation'`);
    // With 'sequence.field' too: the write buffer cuts a removal followed by adds apart at flush
    // (WriteBuffer.drainRuns), as it does at arrival without sequence fields.
  }
  switch (engine) {
    case 'aggregation': {
      const cols = aggregationColumns(schema);
      if (schema.sequenceFieldIndexes.length > 0) {
        const first = cols.findIndex((a) => a?.name === 'first_value' || a?.name === 'first_non_null_value');
        if (first >= 0) {
          throw invalidArgument(`option 'sequence.field' conflicts with aggregate function '${cols[first]!.name}' of column '${schema.fields[first]!.name}'`);
        }
      }
      break;
    }
    case 'partial-update':
      partialUpdateAggregators(schema, strict);
      break;
    case 'first-row':
      if (schema.sequenceFieldIndexes.length > 0) throw invalidArgument(`option 'sequence.field' is not allowed with merge-engine 'first-row' (the first row is kept by input order)`);
      // As Paimon's SchemaValidation: 'none' and 'lookup' only. The lookup producer emits +I for a
      // key the table did not have and nothing else (FirstRowMergeFunctionWrapper; changelog.ts).
      if (o.changelogProducer !== 'none' && o.changelogProducer !== 'lookup') {
        throw invalidArgument(`option 'changelog-producer': '${o.changelogProducer}' is not allowed with merge-engine 'first-row' (Paimon takes only 'none' and 'lookup' with it)`);
      }
      break;
    default:
      break;
  }
}
