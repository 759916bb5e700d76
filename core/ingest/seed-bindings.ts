// The seed bindings: how the seed streams (seed-contracts.ts) fill the seed tables
// (seed-tables.ts). Stock gets one binding per module, each owning its sequence group; the two
// operations streams each feed a deduplicate table ordered by the stream's own sequence.

import type { Binding } from './binding.ts';

export const INVENTORY_TO_STOCK: Binding = {
  name: 'inventory→stock',
  topic: 'tilstand/+/events/inventory/stock',
  contract: 'inventory.stock',
  table: 'stock',
  columns: { item: 'after.item', location: 'after.location', on_hand: 'after.qty', inventory_seq: 'source.seq' },
  sequenceGroup: { field: 'inventory_seq', columns: ['on_hand'] },
};

export const COMMERCE_TO_STOCK: Binding = {
  name: 'commerce→stock',
  topic: 'tilstand/+/events/commerce/reservations',
  contract: 'commerce.reservations',
  table: 'stock',
  columns: { item: 'after.item', location: 'after.location', reserved: 'after.reserved_qty', commerce_seq: 'source.seq' },
  sequenceGroup: { field: 'commerce_seq', columns: ['reserved'] },
};

export const PROCUREMENT_TO_STOCK: Binding = {
  name: 'procurement→stock',
  topic: 'tilstand/+/events/procurement/inbound',
  contract: 'procurement.inbound',
  table: 'stock',
  columns: { item: 'after.item', location: 'after.location', inbound: 'after.inbound_qty', procurement_seq: 'source.seq' },
  sequenceGroup: { field: 'procurement_seq', columns: ['inbound'] },
};

export const JOBS_TO_WORK_QUEUE: Binding = {
  name: 'operations.jobs→work_queue',
  topic: 'tilstand/+/events/operations/jobs',
  contract: 'operations.jobs',
  table: 'work_queue',
  columns: {
    job_id: 'after.job_id',
    status: 'after.status',
    blocked_reason: 'after.blocked_reason',
    capability: 'after.capability',
    material_item: 'after.material_item',
    material_qty: 'after.material_qty',
    priority: 'after.priority',
    due_at: 'after.due_at',
    assigned_resource: 'after.assigned_resource',
    ops_seq: 'source.seq',
  },
};

export const RESOURCES_TO_RESOURCES: Binding = {
  name: 'operations.resources→resources',
  topic: 'tilstand/+/events/operations/resources',
  contract: 'operations.resources',
  table: 'resources',
  columns: {
    resource_id: 'after.resource_id',
    kind: 'after.kind',
    capability: 'after.capability',
    state: 'after.state',
    since: 'after.since',
    ops_seq: 'source.seq',
  },
};

export const SEED_BINDINGS: readonly Binding[] = [
  INVENTORY_TO_STOCK,
  COMMERCE_TO_STOCK,
  PROCUREMENT_TO_STOCK,
  JOBS_TO_WORK_QUEUE,
  RESOURCES_TO_RESOURCES,
];
