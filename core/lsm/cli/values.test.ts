// `--where` as typed on the command line (core/lsm/cli/README.md): spaces around the operator are
// layout, quotes are what keep a string's spaces.
import { describe, expect, it } from 'vitest';
import { parseType, type Table } from '../index.ts';
import { parseWhere } from './values.ts';

const fields = [
  ['item', 'STRING'],
  ['qty', 'INT'],
  ['day', 'DATE'],
  ['ok', 'BOOLEAN'],
].map(([name, type], id) => ({ id, name: name!, type: parseType(type!) }));
const table = { schema: { fields, fieldIndex: new Map(fields.map((f, i) => [f.name, i])) } } as unknown as Table;

describe('parseWhere', () => {
  it('reads `item = A1` as item equal to "A1", as `qty >= 5` is read as qty >= 5', () => {
    expect(parseWhere(table, 'qty >= 5')).toEqual({ column: 'qty', op: '>=', value: 5 });
    expect(parseWhere(table, 'item = A1')).toEqual({ column: 'item', op: '=', value: 'A1' }); // was ' A1': no rows
  });

  it('reads DATE and BOOLEAN values with spaces around the operator as without them', () => {
    expect(parseWhere(table, 'day >= 2024-05-01')).toEqual(parseWhere(table, 'day>=2024-05-01')); // was refused
    expect(parseWhere(table, 'ok = true')).toEqual(parseWhere(table, 'ok=true'));
  });

  it('keeps the spaces of a quoted string', () => {
    expect(parseWhere(table, 'item = " A 1 "')).toEqual({ column: 'item', op: '=', value: ' A 1 ' });
  });
});
