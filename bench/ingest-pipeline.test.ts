// The in-process ingest figures are pipelined (window k+1 queued before window k is applied)
// and must still apply every event exactly once, in journal order, with the table's committed
// journal position at the last applied event. Small workloads, no speed asserted.
//
// Run: npx vitest run --config bench/vitest.config.ts bench/ingest-pipeline.test.ts
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from '../core/lsm/index.ts';
import { DATABASE, ingestIngestor, ingestTilstand } from './tasks.ts';
import { generateEvents, keyOf, MODULES, packWorkload, serializeWorkload, type WorkloadSpec } from './workload.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-bench-pipeline-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const spec: WorkloadSpec = { seed: 20261201, keys: 300, events: 2_500 };
const workloadFile = join(dir, 'workload.bin');
writeFileSync(workloadFile, Buffer.concat(serializeWorkload(packWorkload(spec))));

/** The stock table every event sequence must end in: per key and module, the last event's qty and seq. */
function expectedState(): Map<string, Record<string, unknown>> {
  const rows = new Map<string, Record<string, unknown>>();
  for (const e of generateEvents(spec)) {
    const { item, location } = keyOf(e.key);
    const k = `${item}/${location}`;
    const row = rows.get(k) ?? { item, location, on_hand: null, inventory_seq: null, reserved: null, commerce_seq: null, inbound: null, procurement_seq: null };
    const d = MODULES[e.m]!;
    row[d.column] = e.qty;
    row[d.seqColumn] = BigInt(e.seq);
    rows.set(k, row);
  }
  return rows;
}

function tableState(warehouse: string): Map<string, Record<string, unknown>> {
  const table = new Catalog(warehouse).getTable({ database: DATABASE, table: 'stock' });
  const names = table.schema.fields.map((f) => f.name);
  const rows = new Map<string, Record<string, unknown>>();
  for (const r of table.scanRows()) rows.set(`${r[0]}/${r[1]}`, Object.fromEntries(names.map((n, i) => [n, r[i]])));
  return rows;
}

describe('in-process ingest, pipelined', () => {
  it('TableWriter path: two windows in flight, every event applied, committed position = last applied event', async () => {
    const d = join(dir, 'tilstand');
    const r = await ingestTilstand({ workloadFile, spec, dir: d, commitEvery: 1_000, window: 500 });
    expect(r.maxWindowsInFlight).toBe(2);
    expect(r.commits).toBe(3); // after 1,000 and 2,000 applied events, and the last 500
    expect(r.journal.commits).toBeGreaterThanOrEqual(3); // ≤ 1,000 events per group commit
    const table = new Catalog(join(d, 'warehouse')).getTable({ database: DATABASE, table: 'stock' });
    expect(table.committedProperties()['tilstand.journal.position']).toBe(String(spec.events));
    expect(tableState(join(d, 'warehouse'))).toEqual(expectedState());
    for (const k of ['parseAndQueue', 'waitDurable', 'apply', 'tableCommit'] as const) expect(r.breakdownSec[k]).toBeGreaterThanOrEqual(0);
  });

  it('Ingestor path: two windows in flight, nothing dead-lettered, the same final state', async () => {
    const d = join(dir, 'ingestor');
    const r = await ingestIngestor({ workloadFile, spec, dir: d, commitEvery: 1_000, window: 500 });
    expect(r.maxWindowsInFlight).toBe(2);
    expect(r.failure).toBeNull();
    expect(r.deadLetters).toBe(0);
    expect(tableState(join(d, 'warehouse'))).toEqual(expectedState());
  });
});
