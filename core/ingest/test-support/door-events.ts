// A history table of the site's own, partitioned by day, that keeps 30 days: the yard system's
// door changes, each door's last state per day (docs/modules.md, section 5). Its contract, its
// config.json `tables` entry and the binding that writes it, as test data for the partitioned
// site tables (core/site, core/replay). core/sync's test keeps its own copy: core/sync may not
// import core/ingest.

import type { Binding } from '../binding.ts';
import type { Contract } from '../contracts.ts';

export const DOOR_EVENTS_CONTRACT: Contract = {
  name: 'yard.door_events',
  version: 1,
  compatibility: 'FULL_TRANSITIVE',
  fields: [
    { name: 'day', type: 'STRING NOT NULL' },
    { name: 'door_id', type: 'STRING NOT NULL' },
    { name: 'state', type: 'STRING NOT NULL' },
  ],
};

/** The table's config.json `tables` entry: partitioned by `day`, partitions older than 30 days dropped (checked hourly). */
export const DOOR_EVENTS = {
  table: 'door_events',
  budgetMs: 10_000,
  decision: 'the yard lead reads a month of dock door changes',
  confirmedBy: 'test',
  comment: "Each dock door's last state per day; a partition per day, 30 days kept.",
  columns: [
    { name: 'day', type: 'STRING NOT NULL', description: 'yyyy-MM-dd of the change' },
    { name: 'door_id', type: 'STRING NOT NULL' },
    { name: 'state', type: 'STRING', description: 'free | occupied | down' },
    { name: 'yard_seq', type: 'BIGINT', description: 'source.seq of yard/door_events' },
  ],
  primaryKeys: ['day', 'door_id'],
  partitionKeys: ['day'],
  options: {
    'merge-engine': 'deduplicate',
    'sequence.field': 'yard_seq',
    'partition.expiration-time': '30 d',
    'partition.expiration-check-interval': '1 h',
    'partition.timestamp-formatter': 'yyyy-MM-dd',
  },
};

export const DOOR_EVENTS_BINDING: Binding = {
  name: 'yard.door_events→door_events',
  topic: 'tilstand/+/events/yard/door_events',
  contract: 'yard.door_events',
  table: 'door_events',
  columns: { day: 'after.day', door_id: 'after.door_id', state: 'after.state', yard_seq: 'source.seq' },
};

/** A door's change as the yard system reports it: the event's MQTT payload. */
export function doorEventPayload(seq: number, day: string, door: string, state: string, tsMs: number): Buffer {
  return Buffer.from(JSON.stringify({ op: 'u', before: null, after: { day, door_id: door, state }, source: { module: 'yard', stream: 'door_events', seq }, ts_ms: tsMs, contract: { name: 'yard.door_events', version: 1 } }));
}

/** `yyyy-MM-dd` (UTC) of epoch ms `atMs` minus `daysBack` days. */
export const dayOf = (atMs: number, daysBack = 0): string => new Date(atMs - daysBack * 86_400_000).toISOString().slice(0, 10);
