// The contracts of the seed streams, version 1 each. Registered at site start (registering an
// identical contract again is a no-op). Compatibility FULL_TRANSITIVE: modules and Tilstand are
// upgraded independently, so every version must be readable by every other; a field a binding
// maps can then never disappear without a default (see CONTRACTS.md).
//
// Values travel in types.ts's JSON forms: INT as a number, TIMESTAMP(3) as ISO-8601 text.

import type { Contract } from './contracts.ts';

export const INVENTORY_STOCK: Contract = {
  name: 'inventory.stock',
  version: 1,
  compatibility: 'FULL_TRANSITIVE',
  doc: 'Physical quantity of an item at a location, as inventory counts it.',
  fields: [
    { name: 'item', type: 'STRING NOT NULL' },
    { name: 'location', type: 'STRING NOT NULL' },
    { name: 'qty', type: 'INT NOT NULL' },
  ],
};

export const COMMERCE_RESERVATIONS: Contract = {
  name: 'commerce.reservations',
  version: 1,
  compatibility: 'FULL_TRANSITIVE',
  doc: 'Total quantity of an item at a location promised to open orders.',
  fields: [
    { name: 'item', type: 'STRING NOT NULL' },
    { name: 'location', type: 'STRING NOT NULL' },
    { name: 'reserved_qty', type: 'INT NOT NULL' },
  ],
};

export const PROCUREMENT_INBOUND: Contract = {
  name: 'procurement.inbound',
  version: 1,
  compatibility: 'FULL_TRANSITIVE',
  doc: 'Quantity of an item due at a location on open purchase orders.',
  fields: [
    { name: 'item', type: 'STRING NOT NULL' },
    { name: 'location', type: 'STRING NOT NULL' },
    { name: 'inbound_qty', type: 'INT NOT NULL' },
    { name: 'next_due_at', type: 'TIMESTAMP(3)', default: null },
  ],
};

export const OPERATIONS_JOBS: Contract = {
  name: 'operations.jobs',
  version: 1,
  compatibility: 'FULL_TRANSITIVE',
  doc: 'A job on the floor and its state.',
  fields: [
    { name: 'job_id', type: 'STRING NOT NULL' },
    { name: 'status', type: 'STRING NOT NULL', symbols: ['released', 'blocked', 'in_progress', 'done'] },
    { name: 'blocked_reason', type: 'STRING', default: null },
    { name: 'capability', type: 'STRING NOT NULL' },
    { name: 'material_item', type: 'STRING', default: null },
    { name: 'material_qty', type: 'INT', default: null },
    { name: 'priority', type: 'INT NOT NULL', default: 0 },
    { name: 'due_at', type: 'TIMESTAMP(3)', default: null },
    { name: 'assigned_resource', type: 'STRING', default: null },
  ],
};

/** A row of `operations.jobs` v1 as its JSON event carries it (the simulated modules build these). */
export interface JobEventRow {
  job_id: string;
  status: 'released' | 'blocked' | 'in_progress' | 'done';
  blocked_reason: string | null;
  capability: string;
  material_item: string | null;
  material_qty: number | null;
  priority: number;
  due_at: string | null;
  assigned_resource: string | null;
}

export const OPERATIONS_RESOURCES: Contract = {
  name: 'operations.resources',
  version: 1,
  compatibility: 'FULL_TRANSITIVE',
  doc: 'A machine or team and its state.',
  fields: [
    { name: 'resource_id', type: 'STRING NOT NULL' },
    { name: 'kind', type: 'STRING NOT NULL', symbols: ['machine', 'team'] },
    { name: 'capability', type: 'STRING NOT NULL' },
    { name: 'state', type: 'STRING NOT NULL', symbols: ['free', 'busy', 'down'] },
    { name: 'since', type: 'TIMESTAMP(3) NOT NULL' },
  ],
};

export const SEED_CONTRACTS: readonly Contract[] = [
  INVENTORY_STOCK,
  COMMERCE_RESERVATIONS,
  PROCUREMENT_INBOUND,
  OPERATIONS_JOBS,
  OPERATIONS_RESOURCES,
];
