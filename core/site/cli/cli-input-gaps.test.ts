// Site and inbox commands given input they cannot use say what was expected, with the exit code
// the README gives (2 usage or bad input, 3 conflict with what the site holds): an empty
// `contracts add --file` was read as the file '', a malformed contract was exit 3 as if it
// conflicted with a registered one, and an empty proposal id was looked up and "did not exist".
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initDataDir } from '../init.ts';
import { runMain } from './test-support.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-cli-input-gaps-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const data = join(dir, 'site');
beforeAll(async () => {
  await initDataDir({ data, site: 'north' });
});

describe('tilstand contracts add', () => {
  it('refuses an empty --file naming the option (an unset variable), exit 2', async () => {
    const r = await runMain(['contracts', 'add', '--data', data, '--file', '']);
    // Was "cannot read a contract from : ENOENT: no such file or directory, open ''".
    expect([r.code, r.out, r.err]).toEqual([2, '', "tilstand: option '--file': expected a contract file, got ''\n"]);
  });

  it('refuses a malformed contract as bad input (exit 2), a clash with a registered one as a conflict (exit 3)', async () => {
    const before = readdirSync(join(data, 'contracts')).sort();
    const file = join(dir, 'c.json');
    const malformed: [string, string][] = [
      // Was exit 3, the code of a conflict with the site's contracts.
      ['{"name":"inventory.counts"}', `tilstand: ${file} is not a valid contract: contract 'inventory.counts' vundefined: version: expected a positive integer, got undefined\n`],
      // Was exit 3, "contract 'undefined' vundefined: expected an object" (an array: "…: name: expected ^[a-z]…").
      ['null', `tilstand: ${file} is not a valid contract: expected a JSON object (name, version, fields, …)\n`],
      ['[]', `tilstand: ${file} is not a valid contract: expected a JSON object (name, version, fields, …)\n`],
    ];
    for (const [text, err] of malformed) {
      writeFileSync(file, text);
      const r = await runMain(['contracts', 'add', '--data', data, '--file', file]);
      expect([r.code, r.out, r.err], text).toEqual([2, '', err]);
    }
    // A well-formed contract that clashes with what is registered stays a conflict.
    const v1 = JSON.parse(readFileSync(join(data, 'contracts', 'inventory.stock', 'v1.json'), 'utf8')) as { doc?: string };
    writeFileSync(file, JSON.stringify({ ...v1, doc: 'other words' }));
    const clash = await runMain(['contracts', 'add', '--data', data, '--file', file]);
    expect([clash.code, clash.err]).toEqual([3, "tilstand: contract 'inventory.stock' v1 is already registered with other content\n"]);
    writeFileSync(file, JSON.stringify({ ...v1, version: 3 }));
    const gap = await runMain(['contracts', 'add', '--data', data, '--file', file]);
    expect([gap.code, gap.err]).toEqual([3, "tilstand: contract 'inventory.stock' v3 would leave a gap: the next version is v2\n"]);
    expect(readdirSync(join(data, 'contracts')).sort()).toEqual(before);
  });
});

describe('tilstand decide and evidence', () => {
  it('refuse an empty proposal id (an unset variable) as a usage error, exit 2', async () => {
    for (const args of [
      ['decide', '', 'approve', '--user', 'ane', '--pin', '2468', '--data', data],
      ['evidence', ' ', '--data', data],
    ]) {
      const r = await runMain(args);
      // Was exit 1, "proposal  does not exist".
      expect([r.code, r.out, r.err], args[0]).toEqual([2, '', `tilstand: expected a proposal id (\`tilstand proposals\` lists them), got '${args[1]}'\n`]);
    }
  });
});

describe('a command without --data where the default directory is no site', () => {
  it('says that --data names another one and what the default is (a demo under --data /tmp/demo, the flag forgotten)', async () => {
    const here = process.cwd();
    const empty = join(dir, 'elsewhere');
    mkdirSync(empty);
    process.chdir(empty);
    try {
      const r = await runMain(['status']);
      expect([r.code, r.out, r.err]).toEqual([
        1,
        '',
        `tilstand: ${join(empty, 'tilstand-data')} is not a Tilstand data directory (no config.json); \`--data <dir>\` names another one (the default is ./tilstand-data), or run \`tilstand init --data <dir> --site <id>\` first\n`,
      ]);
    } finally {
      process.chdir(here);
    }
    // Given --data, the advice names that directory, as before.
    const given = await runMain(['status', '--data', join(dir, 'nowhere')]);
    expect(given.err).toBe(`tilstand: ${join(dir, 'nowhere')} is not a Tilstand data directory (no config.json); run \`tilstand init --data ${join(dir, 'nowhere')} --site <id>\` first\n`);
  });
});
