// `tilstand table alter` (table-cli-alter.ts) through the dispatcher of table-cli.ts.

import { mkdtempSync, rmSync } from 'node:fs';
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

describe('tilstand table alter', () => {
  it('applies add, rename, drop, set-type and set-option as one schema', async () => {
    const wh = mkdtempSync(join(tmpdir(), 'lsm-alter-cli-'));
    dirs.push(wh);
    const c = new Catalog(wh);
    c.createDatabase('site_1');
    c.createTable({ database: 'site_1', table: 'stock' }, {
      fields: [{ name: 'item', type: 'STRING' }, { name: 'qty', type: 'INT' }, { name: 'note', type: 'STRING' }],
      primaryKeys: ['item'],
      options: { bucket: '1' },
    });
    const r = await run([
      'alter', 'site_1.stock', '--warehouse', wh,
      '--add-column', 'price:DECIMAL(10, 2)', '--position', 'after:item',
      '--rename-column', 'item:sku', '--drop-column', 'note', '--set-type', 'qty:BIGINT', '--set-option', 'snapshot.num-retained.min=5',
    ]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toEqual({ schema: 1, fields: ['0:sku:STRING NOT NULL', '3:price:DECIMAL(10, 2)', '1:qty:BIGINT'] });
    const bad = await run(['alter', 'site_1.stock', '--warehouse', wh, '--set-option', 'merge-engine=first-row']);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/'merge-engine' cannot be changed/);
    const none = await run(['alter', 'site_1.stock', '--warehouse', wh]);
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/needs at least one/);
  });
});
