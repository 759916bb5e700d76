// The site's V8 flags: one list, set first by every entry that runs a site (and by the memory
// benchmark's child, which must start as a site starts), and never a heap limit.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { applySiteV8Flags, SITE_V8_FLAGS } from './v8-flags.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const source = (rel: string) => readFileSync(join(ROOT, rel), 'utf8');
/** `import('<spec>')` as the entries write it (built, so the import rule's scan does not take it for an import). */
const q = "'";
const dynImport = (spec: string) => `import(${q}${spec}${q})`;

describe('site V8 flags', () => {
  it('set no heap limit (a limit turns a legitimate peak into a crash)', () => {
    for (const f of SITE_V8_FLAGS) expect(f).not.toMatch(/max-old-space|max-heap|max-semi-space|old-space-size|heap-size/);
    expect(SITE_V8_FLAGS).toContain('--heap-growing-percent=25');
  });

  it('are accepted by V8 at run time', () => {
    expect(() => applySiteV8Flags()).not.toThrow();
  });

  for (const entry of ['bin/tilstand.mjs', 'electron/main.mjs']) {
    it(`${entry} sets them before it loads the site`, () => {
      const s = source(entry);
      const apply = s.indexOf(`(await ${dynImport('../core/site/v8-flags.ts')}).applySiteV8Flags();`);
      expect(apply).toBeGreaterThan(0);
      const firstSiteImport = Math.min(...['../core/site/cli/main.ts', './main-process.ts', '../core/site/site.ts'].map((m) => s.indexOf(dynImport(m))).filter((i) => i >= 0));
      expect(apply).toBeLessThan(firstSiteImport);
    });
  }

  it("the memory benchmark's child sets them as its first step (the same list, not a copy)", () => {
    const s = source('bench/tasks.ts');
    const body = s.slice(s.indexOf('export async function memory('));
    expect(body.indexOf('applySiteV8Flags();')).toBeGreaterThan(0);
    expect(body.indexOf('applySiteV8Flags();')).toBeLessThan(body.indexOf(dynImport('../core/site/config.ts')));
    expect(s).not.toMatch(/heap-growing-percent/);
  });
});
