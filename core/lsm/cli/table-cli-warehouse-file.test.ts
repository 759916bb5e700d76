// `--warehouse` naming a file (or a path under one) is refused naming the option, exit 2: every
// table command failed with "list <path> failed: ENOTDIR: not a directory, scandir …", exit 5
// (a failing disk), naming no option.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../testing/cli.ts';
import { runTableCli } from './table-cli.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-cli-warehouse-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = join(dir, 'notes.txt');
writeFileSync(file, 'not a warehouse\n');
const schema = join(dir, 'kv.json');
writeFileSync(schema, JSON.stringify({ fields: [{ name: 'k', type: 'STRING' }], primaryKeys: ['k'], options: { bucket: '1' } }));

describe('tilstand table --warehouse <a file>', () => {
  it('is refused naming --warehouse, exit 2, by reading and writing commands; the file is left as it was', async () => {
    for (const warehouse of [file, join(file, 'warehouse')]) {
      for (const args of [['list'], ['scan', 'd.kv'], ['snapshots', 'd.kv'], ['create', 'd.kv', '--schema', schema], ['put', 'd.kv']]) {
        const r = await runCli(runTableCli, [...args, '--warehouse', warehouse], '{"k":"a"}\n');
        expect.soft([r.code, r.out, r.err], `${args.join(' ')} --warehouse ${warehouse}`).toEqual([2, '', `tilstand: option '--warehouse': ${file} is a file, not a directory\n`]);
      }
    }
    expect(readFileSync(file, 'utf8')).toBe('not a warehouse\n');
  });
});
