// The yard system of docs/modules.md as test data: its contract, its table of the site's own
// (a config.json `tables` entry) and the binding that writes it. Tests of the site's own tables
// (core/ingest, core/site, core/replay, the floor UI's e2e) spread what they vary over these;
// `publishYardDoors` sends its events as the module would.
// core/sync's test keeps its own copy: core/sync may not import core/ingest.

import mqtt from 'mqtt';
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

/** A door's change as the yard system reports it (`trailer`: its trailer_id). */
export interface YardDoorEvent {
  seq: number;
  door: string;
  state: string;
  trailer?: string;
}

/**
 * Publishes the events as the yard module of site `north` does (QoS 1, one PUBACK each: journaled,
 * not yet applied), over one connection with the module's broker password.
 */
export async function publishYardDoors(url: string, password: string, events: readonly YardDoorEvent[]): Promise<void> {
  const client = await mqtt.connectAsync(url, { username: 'yard', password, clientId: 'module-north-yard', protocolVersion: 4, reconnectPeriod: 0, clean: false });
  try {
    for (const e of events) {
      const after = { door_id: e.door, state: e.state, ...(e.trailer ? { trailer_id: e.trailer } : {}) };
      const event = { op: 'u', before: null, after, source: { module: 'yard', stream: 'doors', seq: e.seq }, ts_ms: Date.now(), contract: { name: 'yard.doors', version: 1 } };
      await client.publishAsync('tilstand/north/events/yard/doors', JSON.stringify(event), { qos: 1 });
    }
  } finally {
    await client.endAsync();
  }
}
