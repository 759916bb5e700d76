// A `--data` whose config.json is not Tilstand's (another program's folder) is refused by `users`
// and `contracts` as by status, config, modules, deadletters and proposals: exit 2 naming the key,
// before anything is made there. `users list` printed "no users" (exit 0) and made site.db and
// data-format.json; `users add` added the user there; `contracts list` made contracts/.
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { initDataDir } from '../init.ts';
import { runMain } from './test-support.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-foreign-config-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("users and contracts on a directory whose config.json is not Tilstand's", () => {
  it('are refused as status refuses it, exit 2, and nothing is made there', async () => {
    const data = join(dir, 'other-app');
    mkdirSync(data);
    writeFileSync(join(data, 'config.json'), '{"name": "other app", "version": 3}\n');
    const contract = join(dir, 'c.json');
    writeFileSync(contract, JSON.stringify({ name: 'x.y', version: 1, fields: [] }));
    const status = await runMain(['status', '--data', data]);
    expect(status.code).toBe(2);
    for (const args of [
      ['users', 'list'],
      ['users', 'add', '--name', 'bob', '--role', 'admin', '--pin', '4817'],
      ['users', 'disable', '--name', 'bob'],
      ['users', 'enable', '--name', 'bob'],
      ['users', 'reset', '--name', 'bob', '--pin', '4817'],
      ['contracts', 'list'],
      ['contracts', 'add', '--file', contract],
      // `sync status` said "site.db does not exist" (exit 1); `sync now` on one naming a site made site.db.
      ['sync', 'status'],
      ['sync', 'now', '--hq', join(dir, 'hq')],
    ]) {
      const r = await runMain([...args, '--data', data]);
      expect.soft([r.code, r.out, r.err], args.join(' ')).toEqual([2, '', status.err]);
    }
    expect(readdirSync(data)).toEqual(['config.json']);
  });

  it('users add still works on a freshly initialized directory with no admin yet', async () => {
    const data = join(dir, 'fresh');
    await initDataDir({ data, site: 'north' });
    const add = await runMain(['users', 'add', '--name', 'ada', '--role', 'admin', '--pin', '4817', '--data', data]);
    expect([add.code, add.out, add.err]).toEqual([0, 'added user ada (admin)\n', '']);
    const list = await runMain(['users', 'list', '--data', data]);
    expect([list.code, list.out]).toEqual([0, 'ada  admin  sign-in: pin\n']);
    const contracts = await runMain(['contracts', 'list', '--data', data]);
    expect(contracts.code).toBe(0);
  });
});
