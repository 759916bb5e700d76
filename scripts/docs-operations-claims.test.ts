// What docs/operations.md quotes of the example rule a new demo directory runs
// (docs/examples/rules/door-down.mts) is what that file is: its id and version, in the sketch of
// its code and in the `tilstand status` line the page tells an operator to look for. A version
// raised in the example and not on the page sent a reader looking for a line status never prints.
// And which passwords of digits only `tilstand users add` refuses beside a PIN: the page said "a
// password of digits only", while only the lengths sign-in would take for a PIN are refused.
import Database from 'better-sqlite3';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UserStore } from '../core/inbox/users.ts';

const ROOT = join(import.meta.dirname, '..');
const OPS = readFileSync(join(ROOT, 'docs/operations.md'), 'utf8');
const EXAMPLE = readFileSync(join(ROOT, 'docs/examples/rules/door-down.mts'), 'utf8');

describe('docs/operations.md on the example rule', () => {
  const id = /^\s*id: '([^']+)',/m.exec(EXAMPLE)?.[1];
  const version = /^\s*version: '([^']+)',/m.exec(EXAMPLE)?.[1];

  it('names the example by its id and version wherever it quotes them', () => {
    expect(id).toBe('door-down');
    expect(version).toMatch(/^\d+$/);
    // `rule door-down@N from rules/door-down.mts (sha256 …)` (status) and `door-down@N, sha256 …` (config check).
    const quoted = [...OPS.matchAll(/door-down@(\w+)/g)].map((m) => m[1]);
    expect(quoted.length).toBeGreaterThan(0);
    expect(quoted).toEqual(quoted.map(() => version));
    // The sketch of its code.
    const sketch = [...OPS.matchAll(/id: 'door-down', version: '([^']+)'/g)].map((m) => m[1]);
    expect(sketch).toEqual([version]);
  });
});

describe('docs/operations.md on a password of digits only beside a PIN', () => {
  it('names the lengths the user store refuses beside a PIN and takes without one', async () => {
    const db = new Database(':memory:');
    try {
      const users = new UserStore(db, { scrypt: { N: 1 << 10, r: 8, p: 1 } }); // the hash's cost is not under test
      const taken = (name: string, u: { pin?: string; password: string }) => users.add({ name, role: 'viewer', ...u }).then(() => true, () => false);
      const refused: number[] = [];
      for (let n = 1; n <= 20; n++) {
        const password = '5'.repeat(n);
        if ((await taken(`alone${n}`, { password })) && !(await taken(`beside${n}`, { pin: '4827', password }))) refused.push(n);
      }
      const [min, max] = [refused[0]!, refused.at(-1)!];
      expect(refused).toEqual(Array.from({ length: max - min + 1 }, (_, i) => min + i));
      const said = /a password of [^,;]* beside a PIN is refused/.exec(OPS.replace(/\s+/g, ' '))?.[0];
      expect(said).toBe(`a password of ${min} to ${max} digits beside a PIN is refused`);
    } finally {
      db.close();
    }
  });
});
