// `tilstand table alter` refuses an option named twice in one command (exit 2, naming it): set
// twice stored the last value silently; set and removed did whichever came later in the order.

import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog } from '../index.ts';
import { runTableCli } from './table-cli.ts';
import { runCli } from '../testing/cli.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const run = (args: string[]) => runCli(runTableCli, args);

function warehouse(): string {
  const wh = mkdtempSync(join(tmpdir(), 'lsm-alter-twice-'));
  dirs.push(wh);
  const c = new Catalog(wh);
  c.createDatabase('site_1');
  c.createTable({ database: 'site_1', table: 'stock' }, {
    fields: [{ name: 'item', type: 'STRING' }, { name: 'qty', type: 'INT' }],
    primaryKeys: ['item'],
    options: { bucket: '1', 'snapshot.num-retained.min': '3' },
  });
  return wh;
}

const schemaFiles = (wh: string) => readdirSync(join(wh, 'site_1.db', 'stock', 'schema')).sort();

describe('tilstand table alter: an option named twice', () => {
  it.each([
    [['--set-option', 'snapshot.num-retained.min=5', '--set-option', 'snapshot.num-retained.min=7'], /--set-option snapshot\.num-retained\.min=5, --set-option snapshot\.num-retained\.min=7/],
    [['--set-option', 'snapshot.num-retained.min=5', '--set-option', ' snapshot.num-retained.min = 5'], /--set-option snapshot\.num-retained\.min=5, --set-option  snapshot\.num-retained\.min = 5/],
    [['--remove-option', 'snapshot.num-retained.min', '--remove-option', 'snapshot.num-retained.min'], /--remove-option snapshot\.num-retained\.min, --remove-option snapshot\.num-retained\.min/],
    [['--remove-option', 'snapshot.num-retained.min', '--set-option', 'snapshot.num-retained.min=5'], /--set-option snapshot\.num-retained\.min=5, --remove-option snapshot\.num-retained\.min/],
  ])('refuses %j with exit 2, naming the option, and writes no schema', async (flags, names) => {
    const wh = warehouse();
    const before = schemaFiles(wh);
    const r = await run(['alter', 'site_1.stock', '--warehouse', wh, ...flags]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/option 'snapshot\.num-retained\.min' is named twice/);
    expect(r.err).toMatch(names);
    expect(r.out).toBe('');
    expect(schemaFiles(wh)).toEqual(before);
  });

  it('still takes different options set and removed in one alter', async () => {
    const wh = warehouse();
    const r = await run(['alter', 'site_1.stock', '--warehouse', wh, '--set-option', 'snapshot.num-retained.max=20', '--remove-option', 'snapshot.num-retained.min']);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const options = new Catalog(wh).getTable({ database: 'site_1', table: 'stock' }).schema.options.raw;
    expect(options['snapshot.num-retained.max']).toBe('20');
    expect(options['snapshot.num-retained.min']).toBeUndefined();
  });
});
