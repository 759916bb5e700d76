// The renderer imports only types from core (scripts/check-imports.mjs), and its client needs the
// DOM's types, so the few names it keeps of its own are read from its source here and checked
// against the site's: its API methods, the input-age header and the close code of an ended
// session's event socket.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INPUT_AGE_HEADER, SITE_METHODS } from '../../core/site/api.ts';
import { SESSION_ENDED_CODE } from '../../core/site/ui-server.ts';

const client = readFileSync(join(__dirname, '../../renderer/src/api/client.ts'), 'utf8');
const constant = (name: string): string => {
  const m = new RegExp(`^export const ${name} = ([^;]+);$`, 'm').exec(client);
  if (!m) throw new Error(`renderer/src/api/client.ts has no \`export const ${name} = …;\``);
  return m[1]!;
};

describe("the renderer's copies of the site's names", () => {
  it("knows every method of the site's API", () => {
    const list = /^const METHODS: SiteMethod\[\] = \[([^\]]*)\];$/m.exec(client)?.[1];
    expect(list).toBeDefined();
    expect([...list!.matchAll(/'(\w+)'/g)].map((m) => m[1]).sort()).toEqual([...SITE_METHODS].sort());
  });

  it('sends the input age in the header the site reads (HTTP headers are case-insensitive)', () => {
    expect(constant('INPUT_AGE_HEADER').toLowerCase()).toBe(`'${INPUT_AGE_HEADER}'`);
  });

  it("knows the close code the site ends a session's event socket with", () => {
    expect(constant('SESSION_ENDED_CODE')).toBe(String(SESSION_ENDED_CODE));
  });
});
