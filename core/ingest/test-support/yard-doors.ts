// The yard system of docs/modules.md as test data: its contract, its table of the site's own
// (a config.json `tables` entry) and the binding that writes it. Tests of the site's own tables
// (core/ingest, core/site, core/replay, the floor UI's e2e) spread what they vary over these.
// core/sync's test keeps its own copy: core/sync may not import core/ingest.

import type { Binding } from '../binding.ts';
import type { Contract } from '../contracts.ts';

export const YARD_CONTRACT: Contract = {
  name: 'yard.doors',
  version: 1,
  compatibility: 'FULL_TRANSITIVE',
  fields: [
    { name: 'door_id', type: 'STRING NOT NULL' },
    { name: 'state', type: 'STRING NOT NULL', symbols: ['free', 'occupied', 'down'] },
    { name: 'trailer_id', type: 'STRING', default: null },
  ],
};

/** The table's config.json `tables` entry (a 30 s budget). */
export const YARD_DOORS = {
  table: 'yard_doors',
  budgetMs: 30_000,
  decision: 'the gate crew sees which dock door is free',
  confirmedBy: 'test',
  comment: 'Dock doors as the yard system reports them; one row per door.',
  columns: [
    { name: 'door_id', type: 'STRING NOT NULL' },
    { name: 'state', type: 'STRING', description: 'free | occupied | down' },
    { name: 'yard_seq', type: 'BIGINT', description: 'source.seq of yard/doors' },
  ],
  primaryKeys: ['door_id'],
  options: { 'merge-engine': 'deduplicate', 'sequence.field': 'yard_seq' },
};

export const YARD_BINDING: Binding = {
  name: 'yard.doors→yard_doors',
  topic: 'tilstand/+/events/yard/doors',
  contract: 'yard.doors',
  table: 'yard_doors',
  columns: { door_id: 'after.door_id', state: 'after.state', yard_seq: 'source.seq' },
};
