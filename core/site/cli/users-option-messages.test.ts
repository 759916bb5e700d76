// `tilstand users add|reset` with a PIN, password or badge the user store refuses names the option
// it came in, as `tilstand init` names its own: `users add --password short` said only
// `password: expected 8 to 256 characters`, not which option to fix. Exit 2, nothing written.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initDataDir } from '../init.ts';
import { runMain } from './test-support.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-users-options-'));
const data = join(dir, 'd');
beforeAll(async () => {
  await initDataDir({ data, site: 'north' });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const add = (...args: string[]) => runMain(['users', 'add', '--data', data, '--name', 'Lena', '--role', 'operator', ...args]);
const reset = (...args: string[]) => runMain(['users', 'reset', '--data', data, '--name', 'Lena', ...args]);

describe('tilstand users add|reset: a secret the store refuses', () => {
  it('add: is refused naming its option and the rule, exit 2, and no user is added', async () => {
    const cases: [string[], string][] = [
      [['--password', 'short'], `option '--password': password: expected 8 to 256 characters`],
      [['--password', 'x'.repeat(257)], `option '--password': password: expected 8 to 256 characters`],
      [['--pin', '4827', '--password', '58203941'], `option '--password': password: 8 digits is taken for a PIN at sign-in, and this user has a PIN; give a password with a character other than a digit, or more than 12 digits`],
      [['--pin', '48'], `option '--pin': PIN: expected 4 to 12 digits`],
      [['--badge', 'abc'], `option '--badge': badge: expected 4 to 256 characters`],
    ];
    for (const [args, message] of cases) {
      const r = await add(...args);
      expect([r.code, r.out, r.err], args.join(' ')).toEqual([2, '', `tilstand: ${message}\n`]);
    }
    expect((await runMain(['users', 'list', '--data', data])).out).toBe('no users\n');
  });

  it('add without any secret names no single option, as before', async () => {
    const r = await add();
    expect([r.code, r.err]).toEqual([2, "tilstand: user 'Lena': expected at least one of a PIN, a password or a badge\n"]);
  });

  it('reset: is refused naming its option and the rule, exit 2, and the old secret still signs in', async () => {
    expect((await add('--pin', '4827')).code).toBe(0);
    const short = await reset('--password', 'short');
    expect([short.code, short.out, short.err]).toEqual([2, '', "tilstand: option '--password': password: expected 8 to 256 characters\n"]);
    const pin = await reset('--pin', '48');
    expect([pin.code, pin.out, pin.err]).toEqual([2, '', "tilstand: option '--pin': PIN: expected 4 to 12 digits\n"]);
    expect((await runMain(['users', 'list', '--data', data])).out).toMatch(/^Lena {2}operator {2}sign-in: pin\n$/);
    // A missing user is still exit 1, its message as it was.
    const nobody = await runMain(['users', 'reset', '--data', data, '--name', 'Nobody', '--password', 'short']);
    expect([nobody.code, nobody.err]).toEqual([1, "tilstand: user 'Nobody' does not exist\n"]);
  });
});
