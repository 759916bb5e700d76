// The messages a module's developer reads when a definition in config.json `tables` is wrong
// (docs/modules.md section 5): each must name what is wrong in words, and a column inserted in the
// middle of an existing table's columns must be named as such, not as every later column renamed.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog } from '../lsm/index.ts';
import { checkBinding, checkOrderingStreams, type Binding } from './binding.ts';
import { SEED_BINDINGS } from './seed-bindings.ts';
import { SEED_TABLES } from './seed-tables.ts';
import { evolveToDefinition, parseTableDefinition } from './site-tables.ts';
import { DOOR_EVENTS } from './test-support/door-events.ts';
import { YARD_BINDING, YARD_DOORS } from './test-support/yard-doors.ts';

/** The entry of docs/modules.md section 5, with its trailer column. */
const DOORS = {
  ...YARD_DOORS,
  columns: [
    { name: 'door_id', type: 'STRING NOT NULL' },
    { name: 'state', type: 'STRING', description: 'free | occupied | down' },
    { name: 'trailer_id', type: 'STRING' },
    { name: 'yard_seq', type: 'BIGINT' },
  ],
};

const refusal = (f: () => unknown): string => {
  try {
    f();
  } catch (e) {
    return (e as Error).message;
  }
  return 'accepted';
};

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-site-tables-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('site table definitions', () => {
  it('says a key left out is missing, not "undefined undefined"', () => {
    const { primaryKeys: _pk, ...noKey } = DOORS;
    const noPk = refusal(() => parseTableDefinition(noKey, 'tables[5]'));
    expect(noPk).toMatch(/^tables\[5\]\.primaryKeys: expected a non-empty array of column names .*, got nothing \(the key is missing\)$/);
    const noType = refusal(() => parseTableDefinition({ ...DOORS, columns: [...DOORS.columns, { name: 'bay' }] }, 'tables[5]'));
    expect(noType).toMatch(/^tables\[5\]\.columns\[4\]\.type: expected a Paimon type .*, got nothing \(the key is missing\)$/);
    expect(noPk + noType).not.toContain('undefined');
  });

  it("refuses partition expiry options on a table without partitionKeys, naming the option (Paimon's writer ignores them: every row kept for good)", () => {
    const { partitionKeys: _p, ...unpartitioned } = DOOR_EVENTS;
    const refused = refusal(() => parseTableDefinition(unpartitioned, 'tables[5]'));
    expect(refused).toBe(
      `tables[5].options.partition.expiration-time: the table has no partitionKeys, so no partition of it ever expires: give partitionKeys (a column of primaryKeys, e.g. ["day"]) or leave the option out`,
    );
    expect(refusal(() => parseTableDefinition({ ...unpartitioned, options: { 'merge-engine': 'deduplicate', 'sequence.field': 'yard_seq', 'partition.timestamp-formatter': 'yyyy-MM-dd' } }, 'tables[5]'))).toMatch(
      /^tables\[5\]\.options\.partition\.timestamp-formatter: the table has no partitionKeys/,
    );
    // With the partition keys, or without the options, it is taken.
    expect(parseTableDefinition(DOOR_EVENTS, 'tables[5]')!.partitionKeys).toEqual(['day']);
    expect(parseTableDefinition({ ...unpartitioned, options: { 'merge-engine': 'deduplicate', 'sequence.field': 'yard_seq' } }, 'tables[5]')!.partitionKeys).toEqual([]);
  });

  it('names a column inserted before the last one once, and still every other difference', () => {
    const catalog = new Catalog(join(dir, 'warehouse'));
    catalog.createDatabase('site_north');
    const table = catalog.createTable(
      { database: 'site_north', table: 'yard_doors' },
      { fields: DOORS.columns.map((c) => ({ ...c })), primaryKeys: [...DOORS.primaryKeys], options: { ...DOORS.options }, comment: DOORS.comment },
    );
    // `zone` given second, and trailer_id retyped: two differences, two problems.
    const columns = [DOORS.columns[0]!, { name: 'zone', type: 'STRING' }, ...DOORS.columns.slice(1).map((c) => (c.name === 'trailer_id' ? { ...c, type: 'INT' } : c))];
    const def = parseTableDefinition({ ...DOORS, columns }, 'tables[5]')!;
    const message = refusal(() => evolveToDefinition(table, def, false));
    expect(message).toContain("column 'zone' is new and given before 'state': a new column goes at the end of columns; column 'trailer_id' is STRING in the table and INT in the definition: a column's type cannot change.");
    expect(message).not.toContain('renamed or reordered');
    // A rename is still one: the table's column is not in the definition.
    const renamed = parseTableDefinition({ ...DOORS, columns: DOORS.columns.map((c) => (c.name === 'state' ? { ...c, name: 'status' } : c)) }, 'tables[5]')!;
    expect(refusal(() => evolveToDefinition(table, renamed, false))).toContain("column 2 is 'state' in the table and 'status' in the definition: columns cannot be renamed or reordered");
    // Added at the end, it is a change, not a refusal.
    const added = parseTableDefinition({ ...DOORS, columns: [...DOORS.columns, { name: 'zone', type: 'STRING' }] }, 'tables[5]')!;
    expect(evolveToDefinition(table, added, false)).toMatchObject([{ kind: 'addColumn', name: 'zone' }]);
  });
});

describe("a site table's rows are ordered by its module's seq", () => {
  // An event can reach a table twice (the module's resend, a dead letter replayed, a replay a crash
  // cut short): only a table ordered by the seq keeps the newest row.
  const parse = (options: Record<string, string>, columns = DOORS.columns) => refusal(() => parseTableDefinition({ ...DOORS, columns, options }, 'tables[5]'));

  it('takes deduplicate and partial-update with the seq, and first-row as it is', () => {
    expect(parse({ 'sequence.field': 'yard_seq' })).toBe('accepted');
    expect(parse({ 'merge-engine': 'partial-update', 'sequence.field': 'yard_seq' })).toBe('accepted');
    expect(parse({ 'merge-engine': 'partial-update', 'fields.yard_seq.sequence-group': 'state,trailer_id' })).toBe('accepted');
    expect(parse({ 'merge-engine': 'first-row' })).toBe('accepted');
  });

  it('refuses a table an old event written again would overwrite or count twice, saying what to do', () => {
    expect(parse({})).toMatch(/^tables\[5\]\.options: a deduplicate table of the site's own needs 'sequence\.field': an event can reach a table twice .*bind the module's source\.seq to a BIGINT column and name it in 'sequence\.field'$/);
    expect(parse({ 'merge-engine': 'partial-update' })).toMatch(/^tables\[5\]\.options: a partial-update table of the site's own needs 'sequence\.field', or a sequence group/);
    expect(parse({ 'merge-engine': 'partial-update', 'fields.yard_seq.sequence-group': 'state' })).toMatch(/a sequence group \('fields\.<seq column>\.sequence-group'\) over every column \(not in one: trailer_id\)/);
    expect(parse({ 'merge-engine': 'aggregation', 'sequence.field': 'yard_seq', 'fields.trailer_id.aggregate-function': 'last_value' })).toMatch(/^tables\[5\]\.options: merge-engine 'aggregation' is not taken for a site's table: .* an aggregate would count it twice/);
  });

  it('refuses the seq sorted descending (the lowest seq kept), and takes it ascending as given', () => {
    expect(parse({ 'sequence.field': 'yard_seq', 'sequence.field.sort-order': 'descending' })).toBe(
      "tables[5].options: option 'sequence.field.sort-order' = 'descending' keeps the row with the lowest seq: a module's newer events would never replace its first, and an old one that comes again (a dead letter replayed, a resend) would replace newer rows; leave the option out (ascending)",
    );
    expect(parse({ 'merge-engine': 'partial-update', 'fields.yard_seq.sequence-group': 'state,trailer_id', 'sequence.field.sort-order': 'DESCENDING' })).toMatch(/'sequence\.field\.sort-order' = 'DESCENDING' keeps the row with the lowest seq/);
    expect(parse({ 'sequence.field': 'yard_seq', 'sequence.field.sort-order': 'Ascending' })).toBe('accepted');
  });
});

describe("the bindings of a table of the site's own read the stream whose seq orders it", () => {
  const doors = parseTableDefinition(YARD_DOORS, 'tables[5]')!;
  const gates: Binding = { ...YARD_BINDING, name: 'yard.gates→yard_doors', topic: 'tilstand/+/events/yard/gates' };
  const check = (b: Binding, def = doors) => refusal(() => checkBinding(b, def));
  const together = (bindings: Binding[], defs = [doors]) => refusal(() => checkOrderingStreams(bindings, defs));

  it('refuses a topic filter that can match several streams, where a seq orders the rows', () => {
    expect(check({ ...YARD_BINDING, topic: 'tilstand/+/events/yard/+' })).toBe(
      "binding 'yard.doors→yard_doors': topic filter 'tilstand/+/events/yard/+' does not name one module and stream ('tilstand/+/events/<module>/<stream>'), and table yard_doors orders what it writes by one stream's seq (column yard_seq): the seqs of two streams say nothing about which row is newer; a binding for each stream",
    );
    expect(check({ ...YARD_BINDING, topic: 'tilstand/+/events/#' })).toMatch(/topic filter 'tilstand\/\+\/events\/#' does not name one module and stream/);
    expect(check({ ...YARD_BINDING, topic: 'yard/doors' })).toMatch(/topic filter 'yard\/doors' does not name one module and stream/);
    expect(check({ ...YARD_BINDING, topic: 'tilstand/+/events/+/doors' })).toMatch(/does not name one module and stream/);
    expect(check(YARD_BINDING)).toBe('accepted');
    expect(check({ ...YARD_BINDING, topic: 'tilstand/north/events/yard/doors' })).toBe('accepted');
    // A first-row table orders nothing: the first row of a key stays whichever stream sent it.
    const firstRow = parseTableDefinition({ ...YARD_DOORS, options: { 'merge-engine': 'first-row' } }, 'tables[5]')!;
    expect(check({ ...YARD_BINDING, topic: 'tilstand/+/events/yard/+' }, firstRow)).toBe('accepted');
    // The seed tables are as they were (their bindings are Tilstand's own).
    const stock = SEED_TABLES.find((t) => t.name === 'stock')!;
    const inventory = SEED_BINDINGS.find((b) => b.table === 'stock')!;
    expect(check({ ...inventory, topic: 'tilstand/+/events/inventory/+' }, stock)).toBe('accepted');
  });

  it('refuses two streams writing one ordering column, naming both; one stream twice, or a sequence group each, is taken', () => {
    expect(together([YARD_BINDING, gates])).toBe(
      "binding 'yard.gates→yard_doors': writes column yard_seq of table yard_doors from the seq of stream yard/gates, and binding 'yard.doors→yard_doors' from that of yard/doors: the seqs of two streams say nothing about which row is newer; give each stream its own table, or its own sequence group (partial-update)",
    );
    expect(together([YARD_BINDING, { ...YARD_BINDING, name: 'again', topic: 'tilstand/north/events/yard/doors' }])).toBe('accepted');
    // A partial-update table whose two groups are each ordered by their own stream's seq.
    const split = parseTableDefinition(
      {
        ...YARD_DOORS,
        columns: [
          { name: 'door_id', type: 'STRING NOT NULL' },
          { name: 'state', type: 'STRING' },
          { name: 'yard_seq', type: 'BIGINT' },
          { name: 'gate', type: 'STRING' },
          { name: 'gate_seq', type: 'BIGINT' },
        ],
        options: { 'merge-engine': 'partial-update', 'fields.yard_seq.sequence-group': 'state', 'fields.gate_seq.sequence-group': 'gate' },
      },
      'tables[5]',
    )!;
    const doorsGroup: Binding = { ...YARD_BINDING, columns: { door_id: 'after.door_id', state: 'after.state', yard_seq: 'source.seq' }, sequenceGroup: { field: 'yard_seq', columns: ['state'] } };
    const gatesGroup: Binding = { ...gates, columns: { door_id: 'after.door_id', gate: 'after.state', gate_seq: 'source.seq' }, sequenceGroup: { field: 'gate_seq', columns: ['gate'] } };
    expect(check(doorsGroup, split)).toBe('accepted');
    expect(check(gatesGroup, split)).toBe('accepted');
    expect(together([doorsGroup, gatesGroup], [split])).toBe('accepted');
    expect(together([doorsGroup, { ...gatesGroup, columns: { door_id: 'after.door_id', state: 'after.state', yard_seq: 'source.seq' }, sequenceGroup: { field: 'yard_seq', columns: ['state'] } }], [split])).toMatch(
      /^binding 'yard\.gates→yard_doors': writes column yard_seq of table yard_doors from the seq of stream yard\/gates/,
    );
    expect(together([...SEED_BINDINGS], [...SEED_TABLES])).toBe('accepted');
  });
});
