// The state tables that ingest fills, as Paimon schema-shaped JSON (the fields, keys and options
// of a `schema/schema-0` file, without its bookkeeping), plus `tableFields` to turn one into the
// table store's `DataField[]`. Definitions only: creating the tables is core/site's job.
//
// Choices (see CONTRACTS.md, "Seed tables"):
//   - stock is fed by three modules, each owning a column group: partial-update with one sequence
//     group per module, so a late or replayed event of one module never overwrites another's
//     columns, and a -D from one module retracts only its own group.
//   - work_queue and resources have a single writer (operations): deduplicate ordered by that
//     stream's sequence (`sequence.field`), so a replayed older event never wins.
//   - bucket 1: a site holds thousands of rows, not millions; one bucket keeps files few.

import { parseType, type DataField } from '../lsm/types.ts';

export interface TableFieldDefinition {
  readonly id: number;
  readonly name: string;
  /** A Paimon type string, as in a schema file. */
  readonly type: string;
  readonly description?: string;
}

export interface TableDefinition {
  readonly name: string;
  readonly fields: readonly TableFieldDefinition[];
  readonly partitionKeys: readonly string[];
  readonly primaryKeys: readonly string[];
  readonly options: Readonly<Record<string, string>>;
  readonly comment?: string;
  /**
   * The config key of a table the site defines (`tables[5]`, core/ingest site-tables.ts); absent
   * for Tilstand's own tables. The Ingestor brings such a table to its definition at open.
   */
  readonly definedBy?: string;
}

const fields = (list: [string, string, string?][]): TableFieldDefinition[] =>
  list.map(([name, type, description], id) => (description ? { id, name, type, description } : { id, name, type }));

export const WORK_QUEUE_TABLE: TableDefinition = {
  name: 'work_queue',
  comment: 'Jobs as operations reports them; one row per job.',
  fields: fields([
    ['job_id', 'STRING NOT NULL'],
    ['status', 'STRING', 'released | blocked | in_progress | done'],
    ['blocked_reason', 'STRING'],
    ['capability', 'STRING', 'what a resource must be able to do to run the job'],
    ['material_item', 'STRING'],
    ['material_qty', 'INT'],
    ['priority', 'INT', 'higher runs first'],
    ['due_at', 'TIMESTAMP(3)'],
    ['assigned_resource', 'STRING'],
    ['ops_seq', 'BIGINT', 'source.seq of operations/jobs'],
  ]),
  partitionKeys: [],
  primaryKeys: ['job_id'],
  options: { bucket: '1', 'merge-engine': 'deduplicate', 'sequence.field': 'ops_seq' },
};

export const RESOURCES_TABLE: TableDefinition = {
  name: 'resources',
  comment: 'Machines and teams as operations reports them; one row per resource.',
  fields: fields([
    ['resource_id', 'STRING NOT NULL'],
    ['kind', 'STRING', 'machine | team'],
    ['capability', 'STRING'],
    ['state', 'STRING', 'free | busy | down'],
    ['since', 'TIMESTAMP(3)', 'when the resource entered its state'],
    ['ops_seq', 'BIGINT', 'source.seq of operations/resources'],
  ]),
  partitionKeys: [],
  primaryKeys: ['resource_id'],
  options: { bucket: '1', 'merge-engine': 'deduplicate', 'sequence.field': 'ops_seq' },
};

export const STOCK_TABLE: TableDefinition = {
  name: 'stock',
  comment: 'One row per (item, location); each module owns its own column group.',
  fields: fields([
    ['item', 'STRING NOT NULL'],
    ['location', 'STRING NOT NULL'],
    ['on_hand', 'INT', 'inventory: physical quantity'],
    ['inventory_seq', 'BIGINT', 'source.seq of inventory/stock'],
    ['reserved', 'INT', 'commerce: quantity promised to orders'],
    ['commerce_seq', 'BIGINT', 'source.seq of commerce/reservations'],
    ['inbound', 'INT', 'procurement: quantity on open purchase orders'],
    ['procurement_seq', 'BIGINT', 'source.seq of procurement/inbound'],
  ]),
  partitionKeys: [],
  primaryKeys: ['item', 'location'],
  options: {
    bucket: '1',
    'merge-engine': 'partial-update',
    'fields.inventory_seq.sequence-group': 'on_hand',
    'fields.commerce_seq.sequence-group': 'reserved',
    'fields.procurement_seq.sequence-group': 'inbound',
  },
};

export const SEED_TABLES: readonly TableDefinition[] = [WORK_QUEUE_TABLE, RESOURCES_TABLE, STOCK_TABLE];

/** The table's columns as the table store's DataField[] (types parsed; throws on a bad type). */
export function tableFields(def: TableDefinition): DataField[] {
  return def.fields.map((f) => {
    const field: DataField = { id: f.id, name: f.name, type: parseType(f.type) };
    return f.description === undefined ? field : { ...field, description: f.description };
  });
}

/** `fields.<a>[,<b>].sequence-group` options as (sequence fields, grouped columns) pairs. */
export function sequenceGroups(def: TableDefinition): { fields: string[]; columns: string[] }[] {
  const out: { fields: string[]; columns: string[] }[] = [];
  for (const [key, value] of Object.entries(def.options)) {
    const m = /^fields\.(.+)\.sequence-group$/.exec(key);
    if (!m) continue;
    out.push({ fields: m[1]!.split(',').map((s) => s.trim()), columns: value.split(',').map((s) => s.trim()).filter(Boolean) });
  }
  return out;
}
