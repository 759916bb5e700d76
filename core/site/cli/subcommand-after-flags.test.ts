// A group's subcommand is the first word that is no option and no option's value: `agent --help`
// failed (exit 2, "expected 'tilstand agent run', got '--help'") and `agent --data X run` said
// "unexpected argument 'X'", the first word taken as the subcommand before the flags were parsed;
// `users --data X list` and the other groups the same.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initDataDir } from '../init.ts';
import { runMain } from './test-support.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-subcommand-flags-'));
const data = join(dir, 'site');
beforeAll(async () => {
  await initDataDir({ data, site: 'north', admin: { name: 'ada', pin: '4817' } });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a subcommand after the flags', () => {
  it('agent --help prints the usage, exit 0', async () => {
    for (const args of [['agent', '--help'], ['agent', '-h'], ['agent', 'run', '--help']]) {
      const r = await runMain(args);
      expect([r.code, r.err], args.join(' ')).toEqual([0, '']);
      expect(r.out, args.join(' ')).toContain('tilstand agent run [--data <dir>] [--json]');
    }
  });

  it('agent --data X run runs the agent on X', async () => {
    const r = await runMain(['agent', '--data', data, 'run']);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(r.out).toMatch(/^agent run \S+: 0 new/);
    const j = await runMain(['agent', '--json', '--data=' + data, 'run']);
    expect(j.code).toBe(0);
  }, 60_000);

  it('users, contracts, config, modules and deadletters take it there too', async () => {
    for (const [args, out] of [
      [['users', '--data', data, 'list'], 'ada  admin  sign-in: pin\n'],
      [['users', '--data', data, '--json', 'list'], undefined],
      [['contracts', '--data', data, 'list'], undefined],
      [['modules', '--data', data, 'list'], undefined],
      [['deadletters', '--data', data, 'list'], 'no dead letters\n'],
      [['config', '--data', data, 'check'], undefined],
    ] as const) {
      const r = await runMain([...args]);
      expect([r.code, r.err], args.join(' ')).toEqual([0, '']);
      if (out !== undefined) expect(r.out, args.join(' ')).toBe(out);
    }
  });

  it('still refuses what it refused', async () => {
    for (const [args, err] of [
      [['agent'], "tilstand: expected 'tilstand agent run', got nothing\n"],
      [['agent', '--data', data], "tilstand: expected 'tilstand agent run', got nothing\n"],
      [['agent', 'walk', '--data', data], "tilstand: expected 'tilstand agent run', got 'walk'\n"],
      [['agent', '--data', data, 'run', 'now'], "tilstand: 'agent': unexpected argument 'now'\n"],
      [['users', '--data', data, 'list', 'x'], "tilstand: 'users': unexpected argument 'x'\n"],
      [['users', '--data'], "tilstand: option '--data' expects a value <dir>\n"],
    ] as const) {
      const r = await runMain([...args]);
      expect([r.code, r.out, r.err], args.join(' ')).toEqual([2, '', err]);
    }
  });
});
