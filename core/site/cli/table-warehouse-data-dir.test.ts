// `tilstand table … --warehouse <data>` (the data directory, not <data>/warehouse) is refused,
// exit 2, naming the warehouse: `table create` made site_<id>.db/ in the data directory's root,
// where the site never looks, and `table list` showed `journal` and `site` (journal.db, site.db).
import { mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { initDataDir } from '../init.ts';
import { runMain } from './test-support.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-table-data-dir-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('tilstand table --warehouse <a data directory>', () => {
  it('is refused naming <data>/warehouse, exit 2, before anything is made', async () => {
    const data = join(dir, 'site');
    await initDataDir({ data, site: 'north' });
    const link = join(dir, 'link');
    symlinkSync(data, link);
    const schema = join(dir, 'kv.json');
    writeFileSync(schema, JSON.stringify({ fields: [{ name: 'k', type: 'STRING' }], primaryKeys: ['k'], options: { bucket: '1' } }));
    const before = readdirSync(data).sort();
    for (const given of [data, link]) {
      for (const args of [['list'], ['create', 'site_north.kv', '--schema', schema], ['scan', 'site_north.approval_inbox']]) {
        const r = await runMain(['table', ...args, '--warehouse', given]);
        expect.soft([r.code, r.out, r.err], `${args.join(' ')} --warehouse ${given}`).toEqual([
          2,
          '',
          `tilstand: option '--warehouse': ${given} is a Tilstand data directory, not its warehouse; its tables are in ${join(given, 'warehouse')}\n`,
        ]);
      }
    }
    expect(readdirSync(data).sort()).toEqual(before);
    // Its warehouse, as before.
    const ok = await runMain(['table', 'list', '--warehouse', join(data, 'warehouse')]);
    expect([ok.code, ok.err]).toEqual([0, '']);
    expect(ok.out.split('\n')).toContain('site_north');
  });
});

describe('tilstand table --warehouse <a Paimon warehouse>', () => {
  it('with databases named site and journal (folders site.db/, journal.db/) is read as before', async () => {
    const warehouse = join(dir, 'paimon');
    const schema = join(dir, 'kv2.json');
    writeFileSync(schema, JSON.stringify({ fields: [{ name: 'k', type: 'STRING' }], primaryKeys: ['k'], options: { bucket: '1' } }));
    for (const t of ['site.kv', 'journal.kv']) {
      const r = await runMain(['table', 'create', t, '--schema', schema, '--warehouse', warehouse]);
      expect([r.code, r.err], t).toEqual([0, '']);
    }
    const list = await runMain(['table', 'list', '--warehouse', warehouse]);
    expect([list.code, list.out, list.err]).toEqual([0, 'journal\nsite\n', '']);
  });
});
