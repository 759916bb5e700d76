// A table of the site's own gains a column at the end of its definition together with an option
// that names that column (`fields.<new>.default-value`): the definition's options are checked one
// by one, each against the table as the new columns leave it — not against the table before them,
// which has no such column (Paimon checks the ALTER's result, SchemaValidation.validateFieldsPrefix).

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog } from '../lsm/index.ts';
import { evolveToDefinition, parseTableDefinition } from './site-tables.ts';
import { YARD_DOORS } from './test-support/yard-doors.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-site-table-options-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("a site table's new column with an option naming it", () => {
  it('adds the column and sets the option in one ALTER, and a restart finds nothing to change', () => {
    const catalog = new Catalog(join(dir, 'warehouse'));
    catalog.createDatabase('site_north');
    const id = { database: 'site_north', table: 'yard_doors' };
    catalog.createTable(id, { fields: YARD_DOORS.columns.map((c) => ({ ...c })), primaryKeys: [...YARD_DOORS.primaryKeys], options: { ...YARD_DOORS.options }, comment: YARD_DOORS.comment });
    const def = parseTableDefinition(
      { ...YARD_DOORS, columns: [...YARD_DOORS.columns, { name: 'zone', type: 'STRING' }], options: { ...YARD_DOORS.options, 'fields.zone.default-value': 'A' } },
      'tables[0]',
    )!;
    const changes = evolveToDefinition(catalog.getTable(id), def);
    expect(changes).toEqual([
      { kind: 'setOption', key: 'fields.zone.default-value', value: 'A' },
      { kind: 'addColumn', name: 'zone', type: 'STRING', position: { after: 'yard_seq' } },
    ]);
    const table = catalog.getTable(id);
    expect(table.schema.fields.map((f) => f.name)).toEqual(['door_id', 'state', 'yard_seq', 'zone']);
    expect(table.schema.options.raw['fields.zone.default-value']).toBe('A');
    expect(evolveToDefinition(table, def)).toEqual([]);
  });

  it('still refuses an option naming a column neither the table nor the definition has', () => {
    const catalog = new Catalog(join(dir, 'warehouse'));
    catalog.createDatabase('site_north');
    const id = { database: 'site_north', table: 'yard_doors' };
    catalog.createTable(id, { fields: YARD_DOORS.columns.map((c) => ({ ...c })), primaryKeys: [...YARD_DOORS.primaryKeys], options: { ...YARD_DOORS.options }, comment: YARD_DOORS.comment });
    const def = { ...parseTableDefinition({ ...YARD_DOORS, columns: [...YARD_DOORS.columns, { name: 'zone', type: 'STRING' }] }, 'tables[0]')! };
    const withBad = { ...def, options: { ...def.options, 'fields.bay.default-value': 'A' } };
    expect(() => evolveToDefinition(catalog.getTable(id), withBad, false)).toThrow(/option 'fields\.bay\.default-value' names unknown column 'bay'/);
  });
});
