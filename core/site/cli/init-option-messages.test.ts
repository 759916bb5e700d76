// `tilstand init` with a site id, admin name or PIN it cannot use names the option it came in:
// `init --site ''` said `site id "": expected a non-empty string`, which does not say which
// option to fix (an unset variable in a script, `--site "$SITE"`). Exit 2, nothing written.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runMain } from './test-support.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-init-options-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('tilstand init: a bad --site, --admin or --pin', () => {
  it('is refused naming the option, exit 2, and no data directory is made', async () => {
    const cases: [string[], string][] = [
      [['--site', ''], `option '--site': site id "": expected a non-empty string`],
      [['--site', 'north pole'], `option '--site': site id "north pole": expected letters, digits, '_' or '-' (at most 64, starting with a letter or digit), got "north pole"`],
      [['--site', 'north', '--admin', '', '--pin', '4821'], `option '--admin': admin name "": expected a non-empty string`],
      [['--site', 'north', '--admin', 'kari', '--pin', '48'], `option '--pin': admin PIN: expected 4 to 12 digits`],
    ];
    for (const [k, [args, message]] of cases.entries()) {
      const data = join(dir, `d${k}`);
      const r = await runMain(['init', '--data', data, ...args]);
      expect([r.code, r.out, r.err], args.join(' ')).toEqual([2, '', `tilstand: ${message}\n`]);
      expect(existsSync(join(data, 'config.json')), args.join(' ')).toBe(false);
    }
  });

  it('an initialized directory is still a conflict (exit 3), its message unchanged', async () => {
    const data = join(dir, 'ok');
    expect((await runMain(['init', '--data', data, '--site', 'north'])).code).toBe(0);
    const again = await runMain(['init', '--data', data, '--site', 'north']);
    expect([again.code, again.err]).toEqual([3, `tilstand: ${data} is already a Tilstand data directory (it has config.json)\n`]);
  });
});
