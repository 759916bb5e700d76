import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyBinding, bindingsFor, BindingError, checkBinding, matchTopic, retractionOfMovedKey, topicFilterProblem, type Binding } from './binding.ts';
import { checkEnvelopeContract, ContractRegistry } from './contracts.ts';
import { parseEnvelope, type Envelope } from './envelope.ts';
import { SEED_BINDINGS, INVENTORY_TO_STOCK, COMMERCE_TO_STOCK, JOBS_TO_WORK_QUEUE } from './seed-bindings.ts';
import { SEED_CONTRACTS } from './seed-contracts.ts';
import { SEED_TABLES, STOCK_TABLE, WORK_QUEUE_TABLE, RESOURCES_TABLE, tableFields, type TableDefinition } from './seed-tables.ts';
import { parseType } from '../lsm/types.ts';

describe('matchTopic', () => {
  it.each([
    ['tilstand/+/events/inventory/stock', 'tilstand/s1/events/inventory/stock', true],
    ['tilstand/+/events/inventory/stock', 'tilstand/s1/events/inventory/levels', false],
    ['tilstand/+/events/#', 'tilstand/s1/events/inventory/stock', true],
    ['tilstand/+/events/#', 'tilstand/s1/events', true], // '#' also matches the parent level
    ['tilstand/+/events/+', 'tilstand/s1/events/inventory/stock', false],
    ['#', 'tilstand/s1/events/a/b', true],
    ['#', '$SYS/broker/uptime', false],
    ['+/x', '$SYS/x', false],
    ['tilstand/s1', 'tilstand/s1/events', false],
    ['tilstand/s1/events', 'tilstand/s1', false],
    ['a//b', 'a//b', true],
    ['a/+/b', 'a//b', true],
  ])('%s ~ %s → %s', (filter, topic, ok) => {
    expect(matchTopic(filter, topic)).toBe(ok);
  });

  it('knows invalid filters', () => {
    expect(topicFilterProblem('a/#/b')).toMatch(/'#' must be the last level/);
    expect(topicFilterProblem('a/b#')).toMatch(/'#' must be a whole level/);
    expect(topicFilterProblem('a/b+/c')).toMatch(/'\+' must be a whole level/);
    expect(topicFilterProblem('')).toMatch(/non-empty/);
    expect(topicFilterProblem('tilstand/+/events/#')).toBeUndefined();
  });

  it('finds the bindings of a topic', () => {
    expect(bindingsFor(SEED_BINDINGS, 'tilstand/s1/events/commerce/reservations')).toEqual([COMMERCE_TO_STOCK]);
    expect(bindingsFor(SEED_BINDINGS, 'tilstand/s1/events/commerce/orders')).toEqual([]);
  });
});

const tableOf = (name: string): TableDefinition => SEED_TABLES.find((t) => t.name === name)!;
const contractOf = (name: string) => SEED_CONTRACTS.find((c) => c.name === name)!;

describe('checkBinding', () => {
  it('accepts every seed binding against its seed table and contract', () => {
    for (const b of SEED_BINDINGS) expect(() => checkBinding(b, tableOf(b.table), { contract: contractOf(b.contract) })).not.toThrow();
  });

  const expectRefusal = (b: Binding, table: TableDefinition, why: string | RegExp, column?: string) => {
    let err: unknown;
    try {
      checkBinding(b, table, { contract: contractOf(b.contract) });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(BindingError);
    expect((err as BindingError).message).toMatch(why);
    if (column) expect((err as BindingError).column).toBe(column);
  };

  it('names the binding and the column', () => {
    expectRefusal(
      { ...INVENTORY_TO_STOCK, columns: { ...INVENTORY_TO_STOCK.columns, shelf: 'after.item' } },
      STOCK_TABLE,
      "binding 'inventory→stock': table 'stock' has no column 'shelf'",
      'shelf',
    );
  });

  it.each<[string, Partial<Binding>, RegExp, string | undefined]>([
    ['unknown path root', { columns: { ...INVENTORY_TO_STOCK.columns, on_hand: 'payload.qty' } }, /column 'on_hand' ← 'payload.qty': unknown path root 'payload'/, 'on_hand'],
    ['a field the contract lacks', { columns: { ...INVENTORY_TO_STOCK.columns, on_hand: 'after.quantity' } }, /contract 'inventory.stock' has no field 'quantity'/, 'on_hand'],
    ['sequence-group column not in the table', { sequenceGroup: { field: 'inventory_seq', columns: ['on_hand', 'ghost'] } }, /sequence-group column 'ghost' is not a column of 'stock'/, 'ghost'],
    ['sequence-group column of another group', { sequenceGroup: { field: 'inventory_seq', columns: ['on_hand', 'reserved'] } }, /column 'reserved' is not in the table's sequence group of 'inventory_seq'/, 'reserved'],
    ['sequence field without option', { sequenceGroup: { field: 'on_hand', columns: [] } }, /table 'stock' has no option 'fields.on_hand.sequence-group'/, 'on_hand'],
    ['unbound key column', { columns: { item: 'after.item', on_hand: 'after.qty', inventory_seq: 'source.seq' } }, /key column 'location' of table 'stock' is not bound/, 'location'],
    ['unbound sequence field', { columns: { item: 'after.item', location: 'after.location', on_hand: 'after.qty' } }, /sequence-group field 'inventory_seq' is not bound/, 'inventory_seq'],
    ['writing another module\'s column', { columns: { ...INVENTORY_TO_STOCK.columns, reserved: 'after.qty' }, sequenceGroup: { field: 'inventory_seq', columns: ['on_hand'] } }, /column 'reserved' is outside this binding's sequence group 'inventory_seq'/, 'reserved'],
    ['group columns without sequenceGroup', { sequenceGroup: undefined }, /column 'on_hand' belongs to the sequence group of 'inventory_seq'; declare sequenceGroup/, 'on_hand'],
    ['a bad topic filter', { topic: 'tilstand/#/stock' }, /topic filter 'tilstand\/#\/stock': '#' must be the last level/, undefined],
    ['a bad kind', { kinds: { d: '-X' as never } }, /kinds: '-X' is not a row kind/, undefined],
  ])('refuses %s', (_, patch, why, column) => {
    expectRefusal({ ...INVENTORY_TO_STOCK, ...patch } as Binding, STOCK_TABLE, why, column);
  });

  it('refuses a sequence group on a table that is not partial-update', () => {
    expectRefusal({ ...JOBS_TO_WORK_QUEUE, sequenceGroup: { field: 'ops_seq', columns: ['status'] } }, WORK_QUEUE_TABLE, /sequenceGroup needs a partial-update table; 'work_queue' uses 'deduplicate'/);
  });

  it("refuses a binding that leaves the table's sequence.field unbound (null sorts oldest: a late or replayed event would win)", () => {
    const { ops_seq: _, ...noSeq } = JOBS_TO_WORK_QUEUE.columns;
    expectRefusal(
      { ...JOBS_TO_WORK_QUEUE, columns: noSeq },
      WORK_QUEUE_TABLE,
      /^binding 'operations\.jobs→work_queue': table 'work_queue' orders its rows by option 'sequence\.field' = 'ops_seq', and column 'ops_seq' is not bound in columns; expected a path giving the stream's order, usually 'ops_seq': 'source\.seq'/,
      'ops_seq',
    );
    // Filled by enrich instead: a lookup that finds no row leaves it null all the same.
    const enriched: Binding = { ...JOBS_TO_WORK_QUEUE, columns: noSeq, enrich: { table: 'resources', key: { resource_id: 'after.assigned_resource' }, columns: { ops_seq: 'ops_seq' } } };
    expect(() => checkBinding(enriched, WORK_QUEUE_TABLE, { enrichTable: RESOURCES_TABLE })).toThrow(/column 'ops_seq' is not bound in columns \(enrich leaves it null when the lookup finds no row\)/);
    // Every column of a comma list.
    const twoSeq: TableDefinition = { ...WORK_QUEUE_TABLE, options: { ...WORK_QUEUE_TABLE.options, 'sequence.field': 'ops_seq, priority' } };
    const { priority: __, ...noPriority } = JOBS_TO_WORK_QUEUE.columns;
    expectRefusal({ ...JOBS_TO_WORK_QUEUE, columns: noPriority }, twoSeq, /'sequence\.field' = 'ops_seq, priority', and column 'priority' is not bound/, 'priority');
    expect(() => checkBinding(JOBS_TO_WORK_QUEUE, twoSeq, { contract: contractOf(JOBS_TO_WORK_QUEUE.contract) })).not.toThrow();
  });

  it("lets a sequenceGroup binding leave a table-wide sequence.field unbound (its group field orders all it writes)", () => {
    const both: TableDefinition = { ...STOCK_TABLE, fields: [...STOCK_TABLE.fields, { id: 99, name: 'row_seq', type: 'BIGINT' }], options: { ...STOCK_TABLE.options, 'sequence.field': 'row_seq' } };
    expect(() => checkBinding(INVENTORY_TO_STOCK, both, { contract: contractOf(INVENTORY_TO_STOCK.contract) })).not.toThrow();
    const { sequenceGroup: _, ...ungrouped } = INVENTORY_TO_STOCK;
    expect(() => checkBinding({ ...ungrouped, columns: { item: 'after.item', location: 'after.location', row_seq: 'source.seq' } }, both)).not.toThrow();
    expect(() => checkBinding({ ...ungrouped, columns: { item: 'after.item', location: 'after.location' } }, both)).toThrow(/column 'row_seq' is not bound in columns/);
  });

  it('refuses a sequence-group field filled by enrich (a missing lookup row nulls it: the group ignores the event)', () => {
    const { inventory_seq: _, ...noSeq } = INVENTORY_TO_STOCK.columns;
    const b: Binding = { ...INVENTORY_TO_STOCK, columns: noSeq, enrich: { table: 'resources', key: { resource_id: 'after.item' }, columns: { inventory_seq: 'ops_seq' } } };
    expect(() => checkBinding(b, STOCK_TABLE, { enrichTable: RESOURCES_TABLE })).toThrow(/sequence-group field 'inventory_seq' is bound by enrich; expected it in columns/);
  });

  it('checks enrichment against both tables', () => {
    const b: Binding = {
      ...JOBS_TO_WORK_QUEUE,
      columns: { job_id: 'after.job_id', ops_seq: 'source.seq' },
      enrich: { table: 'resources', key: { resource_id: 'after.assigned_resource' }, columns: { capability: 'capability', ghost: 'kind' } },
    };
    expect(() => checkBinding(b, WORK_QUEUE_TABLE, { enrichTable: RESOURCES_TABLE })).toThrow(/table 'work_queue' has no column 'ghost' \(enrich\)/);
    const b2 = { ...b, enrich: { ...b.enrich!, columns: { capability: 'skills' } } };
    expect(() => checkBinding(b2, WORK_QUEUE_TABLE, { enrichTable: RESOURCES_TABLE })).toThrow(/enrich table 'resources' has no column 'skills'/);
  });
});

describe('applyBinding', () => {
  const stockCols = tableFields(STOCK_TABLE);
  const env = (patch: Partial<Envelope>): Envelope => ({
    op: 'c',
    before: null,
    after: { item: 'A-1', location: 'L1', qty: 12 },
    source: { module: 'inventory', stream: 'stock', seq: 41 },
    ts_ms: 1_764_000_000_123,
    contract: { name: 'inventory.stock', version: 1 },
    ...patch,
  });

  it('maps c/r to +I, u to +U, d to -D (from the before image); only bound columns appear', () => {
    expect(applyBinding(INVENTORY_TO_STOCK, env({}), stockCols)).toEqual({
      ok: true,
      kind: '+I',
      row: { item: 'A-1', location: 'L1', on_hand: 12, inventory_seq: 41n },
    });
    expect(applyBinding(INVENTORY_TO_STOCK, env({ op: 'r' }), stockCols)).toMatchObject({ kind: '+I' });
    expect(applyBinding(INVENTORY_TO_STOCK, env({ op: 'u' }), stockCols)).toMatchObject({ kind: '+U' });
    const d = applyBinding(INVENTORY_TO_STOCK, env({ op: 'd', before: { item: 'A-1', location: 'L1', qty: 3 }, after: null }), stockCols);
    expect(d).toEqual({ ok: true, kind: '-D', row: { item: 'A-1', location: 'L1', on_hand: 3, inventory_seq: 41n } });
    expect(applyBinding({ ...INVENTORY_TO_STOCK, kinds: { d: '-U' } }, env({ op: 'd', before: { item: 'A-1', location: 'L1', qty: 3 }, after: null }), stockCols)).toMatchObject({ kind: '-U' });
  });

  it('converts timestamps (ISO text, and ts_ms from milliseconds)', () => {
    const cols = tableFields(WORK_QUEUE_TABLE);
    const e = env({
      source: { module: 'operations', stream: 'jobs', seq: 9 },
      contract: { name: 'operations.jobs', version: 1 },
      after: { job_id: 'J1', status: 'released', blocked_reason: null, capability: 'weld', material_item: null, material_qty: null, priority: 2, due_at: '2026-12-01T08:00:00.000Z', assigned_resource: null },
    });
    const r = applyBinding(JOBS_TO_WORK_QUEUE, e, cols);
    expect(r).toMatchObject({ ok: true, kind: '+I', row: { job_id: 'J1', due_at: Date.UTC(2026, 11, 1, 8) * 1000, ops_seq: 9n, blocked_reason: null } });
    const withTs = applyBinding({ ...JOBS_TO_WORK_QUEUE, columns: { ...JOBS_TO_WORK_QUEUE.columns, due_at: 'ts_ms' } }, e, cols);
    expect(withTs.ok && withTs.row.due_at).toBe(1_764_000_000_123_000);
  });

  it('refuses a number for a date or time column from any path but ts_ms: ms, µs or days cannot be told apart', () => {
    const cols = tableFields(WORK_QUEUE_TABLE);
    // A Debezium connector's source.ts_ms (epoch ms), bound to a TIMESTAMP(3) column: read as epoch
    // µs it was 1970-01-21 in the table, without a word. Contracts refuse a number for a time field.
    const e = env({
      source: { module: 'operations', stream: 'jobs', seq: 9, ts_ms: 1_764_000_000_123 },
      contract: { name: 'operations.jobs', version: 1 },
      after: { job_id: 'J1', status: 'released', blocked_reason: null, capability: 'weld', material_item: null, material_qty: null, priority: 2, due_at: null, assigned_resource: null },
    });
    const b = { ...JOBS_TO_WORK_QUEUE, columns: { ...JOBS_TO_WORK_QUEUE.columns, due_at: 'source.ts_ms' } };
    const r = applyBinding(b, e, cols);
    expect(r).toMatchObject({ ok: false, reason: 'unfit_for_table', path: 'source.ts_ms' });
    if (!r.ok) expect(r.detail).toMatch(/due_at.*ISO-8601 text, got a number/);
    // Text still converts, and ts_ms (the envelope's own, epoch ms) too.
    const text = applyBinding(b, env({ ...e, source: { ...e.source, ts_ms: '2026-12-01T08:00:00.000Z' } }), cols);
    expect(text).toMatchObject({ ok: true, row: { due_at: Date.UTC(2026, 11, 1, 8) * 1000 } });
    expect(applyBinding({ ...b, columns: { ...b.columns, due_at: 'ts_ms' } }, e, cols)).toMatchObject({ ok: true, row: { due_at: 1_764_000_000_123_000 } });
  });

  it('binding_error for another contract or an absent path; unfit_for_table for a value the column cannot hold', () => {
    expect(applyBinding(INVENTORY_TO_STOCK, env({ contract: { name: 'commerce.reservations', version: 1 } }), stockCols)).toMatchObject({
      ok: false,
      reason: 'binding_error',
    });
    const absent = applyBinding(INVENTORY_TO_STOCK, env({ after: { item: 'A-1', location: 'L1' } }), stockCols);
    expect(absent).toMatchObject({ ok: false, reason: 'binding_error', path: 'after.qty' });
    const big = applyBinding(INVENTORY_TO_STOCK, env({ after: { item: 'A-1', location: 'L1', qty: 2 ** 40 } }), stockCols);
    expect(big).toMatchObject({ ok: false, reason: 'unfit_for_table', path: 'after.qty' });
    if (!big.ok) expect(big.detail).toMatch(/column 'on_hand' \(INT\): expected an integer in -2147483648..2147483647/);
    const nullKey = applyBinding(INVENTORY_TO_STOCK, env({ after: { item: null, location: 'L1', qty: 1 } }), stockCols);
    expect(nullKey).toMatchObject({ ok: false, reason: 'unfit_for_table', path: 'after.item' });
  });

  it('enriches through the injected lookup; a missing row leaves the columns absent', () => {
    const b: Binding = {
      ...JOBS_TO_WORK_QUEUE,
      columns: { job_id: 'after.job_id', assigned_resource: 'after.assigned_resource', ops_seq: 'source.seq' },
      enrich: { table: 'resources', key: { resource_id: 'after.assigned_resource' }, columns: { capability: 'capability' } },
    };
    const e = env({ contract: { name: 'operations.jobs', version: 1 }, after: { job_id: 'J1', assigned_resource: 'R7' } });
    const cols = tableFields(WORK_QUEUE_TABLE);
    const lookup = (table: string, key: Readonly<Record<string, unknown>>) => (table === 'resources' && key.resource_id === 'R7' ? { capability: 'weld' } : undefined);
    expect(applyBinding(b, e, cols, { lookup })).toMatchObject({ ok: true, row: { job_id: 'J1', capability: 'weld' } });
    const none = applyBinding(b, env({ contract: { name: 'operations.jobs', version: 1 }, after: { job_id: 'J1', assigned_resource: 'R8' } }), cols, { lookup });
    expect(none.ok && 'capability' in none.row).toBe(false);
    expect(applyBinding(b, e, cols)).toMatchObject({ ok: false, reason: 'binding_error' });
  });

  it("retracts the old key of an update that moves the row: a delete of the before image, with the event's seq", () => {
    const moved = env({ op: 'u', before: { item: 'A-1', location: 'L1', qty: 3 }, after: { item: 'A-1', location: 'L2', qty: 3 } });
    const row = (applyBinding(INVENTORY_TO_STOCK, moved, stockCols) as { row: Record<string, unknown> }).row;
    const keys = STOCK_TABLE.primaryKeys;
    expect(retractionOfMovedKey(INVENTORY_TO_STOCK, moved, row, stockCols, keys)).toEqual({ ok: true, kind: '-D', row: { item: 'A-1', location: 'L1', on_hand: 3, inventory_seq: 41n } });
    expect(retractionOfMovedKey({ ...INVENTORY_TO_STOCK, kinds: { d: '-U' } }, moved, row, stockCols, keys)).toMatchObject({ kind: '-U' });
    const stays = env({ op: 'u', before: { item: 'A-1', location: 'L2', qty: 9 }, after: { item: 'A-1', location: 'L2', qty: 3 } });
    expect(retractionOfMovedKey(INVENTORY_TO_STOCK, stays, row, stockCols, keys)).toBeUndefined();
    expect(retractionOfMovedKey(INVENTORY_TO_STOCK, env({ op: 'u', before: null, after: moved.after }), row, stockCols, keys)).toBeUndefined();
    expect(retractionOfMovedKey(INVENTORY_TO_STOCK, env({ op: 'u', before: { item: 'A-1', qty: 3 }, after: moved.after }), row, stockCols, keys)).toBeUndefined();
    expect(retractionOfMovedKey(INVENTORY_TO_STOCK, env({ op: 'c', before: moved.before, after: moved.after }), row, stockCols, keys)).toBeUndefined();
  });

  it('compares the keys of the two images as the column holds them: one instant at two offsets is the same key', () => {
    const cols = [
      { id: 0, name: 'at', type: parseType('TIMESTAMP(3) NOT NULL') },
      { id: 1, name: 'n', type: parseType('BIGINT') },
    ];
    const b: Binding = { topic: 'tilstand/+/events/clock/ticks', contract: 'clock.ticks', table: 'ticks', columns: { at: 'after.at', n: 'source.seq' } };
    const e = env({ op: 'u', contract: { name: 'clock.ticks', version: 1 }, before: { at: '2026-12-01T09:00:00+01:00' }, after: { at: '2026-12-01T08:00:00Z' } });
    const row = (applyBinding(b, e, cols) as { row: Record<string, unknown> }).row;
    expect(retractionOfMovedKey(b, e, row, cols, ['at'])).toBeUndefined();
    const later = env({ ...e, before: { at: '2026-12-01T08:00:00+01:00' } });
    expect(retractionOfMovedKey(b, later, row, cols, ['at'])).toMatchObject({ ok: true, kind: '-D', row: { at: Date.UTC(2026, 11, 1, 7) * 1000 } });
  });
});

describe('the pure pipeline on the seed set', () => {
  it('payload → envelope → contract → row, for every seed stream', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tilstand-binding-'));
    try {
      const reg = new ContractRegistry(dir);
      for (const c of SEED_CONTRACTS) reg.register(c);
      const cases: [string, Record<string, unknown>, string, Record<string, unknown>][] = [
        ['inventory/stock', { item: 'A', location: 'L', qty: 5 }, 'stock', { item: 'A', location: 'L', on_hand: 5, inventory_seq: 1n }],
        ['commerce/reservations', { item: 'A', location: 'L', reserved_qty: 2 }, 'stock', { item: 'A', location: 'L', reserved: 2, commerce_seq: 1n }],
        ['procurement/inbound', { item: 'A', location: 'L', inbound_qty: 9 }, 'stock', { item: 'A', location: 'L', inbound: 9, procurement_seq: 1n }],
        ['operations/jobs', { job_id: 'J', status: 'blocked', blocked_reason: 'no material', capability: 'pack' }, 'work_queue', { job_id: 'J', status: 'blocked', priority: 0, due_at: null, ops_seq: 1n }],
        ['operations/resources', { resource_id: 'R', kind: 'team', capability: 'pack', state: 'free', since: '2026-12-01T06:00:00Z' }, 'resources', { resource_id: 'R', kind: 'team', since: Date.UTC(2026, 11, 1, 6) * 1000 }],
      ];
      for (const [ms, after, table, expected] of cases) {
        const [module, stream] = ms.split('/') as [string, string];
        const topic = `tilstand/s1/events/${module}/${stream}`;
        const payload = { op: 'c', before: null, after, source: { module, stream, seq: 1 }, ts_ms: 0, contract: { name: `${module}.${stream}`, version: 1 } };
        const parsed = parseEnvelope(topic, Buffer.from(JSON.stringify(payload)), { payload_bytes_max: 65536 });
        if (!parsed.ok) throw new Error(parsed.detail);
        const checked = checkEnvelopeContract(reg, parsed.envelope);
        if (!checked.ok) throw new Error(checked.detail);
        const [binding] = bindingsFor(SEED_BINDINGS, topic);
        expect(binding!.table).toBe(table);
        const r = applyBinding(binding!, checked.envelope, tableFields(tableOf(table)));
        expect(r).toMatchObject({ ok: true, kind: '+I', row: expected });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
