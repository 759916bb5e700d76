// What docs/operations.md quotes of the example rule a new demo directory runs
// (docs/examples/rules/door-down.mts) is what that file is: its id and version, in the sketch of
// its code and in the `tilstand status` line the page tells an operator to look for. A version
// raised in the example and not on the page sent a reader looking for a line status never prints.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

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
