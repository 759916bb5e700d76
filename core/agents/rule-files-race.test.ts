// A rule file's SHA-256 names the code that ran (DESIGN.md, "A rule file's imports, and its
// SHA-256"). The loader read the files to hash them, then imported them from disk: a file written
// in between (an editor saving during a site's reload, a copy still under way at its start) ran
// code the recorded hash does not describe. The files are read again after the import, and a
// load whose files changed since they were hashed is refused. The write is made from inside the
// loader — just before tsx's import, or (a file without imports, which Node imports) once esbuild
// found its graph, after the file was hashed — where a real one falls by chance.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, expect, it, vi } from 'vitest';
import { loadRuleFiles } from './rule-files.ts';

/** Run once, when the next file is about to be imported: the moment between its hash and its import. */
let beforeImport: (() => void) | undefined;
// A rule file with imports of its own is imported through tsx's tsImport (rule-files.ts).
vi.mock('tsx/esm/api', async (importOriginal) => {
  const real = await importOriginal<typeof import('tsx/esm/api')>();
  return {
    ...real,
    tsImport: (specifier: string, parent: string) => {
      const then = beforeImport;
      beforeImport = undefined;
      then?.();
      return real.tsImport(specifier, parent);
    },
  };
});

/** Run once, when esbuild has found the next file's module graph: after the rule file was read and hashed. */
let afterGraph: (() => void) | undefined;
vi.mock('esbuild', async (importOriginal) => {
  const real = await importOriginal<typeof import('esbuild')>();
  return {
    ...real,
    build: async (o: import('esbuild').BuildOptions) => {
      const r = await real.build(o);
      const then = afterGraph;
      afterGraph = undefined;
      then?.();
      return r;
    },
  };
});

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-agents-rule-files-race-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  beforeImport = afterGraph = undefined;
});

const rule = (description: string) =>
  `import { note } from './lib/note.mjs';\nexport default { id: 'race-rule', version: '1', description: ${JSON.stringify(description)}, messages: { 'race-rule.note': note }, evaluate: () => [], recheck: () => ({ holds: true }), effectSeen: () => false };\n`;
const note = (en: string) => `export const note = { en: ${JSON.stringify(en)}, nb: 'et notat', de: 'eine Notiz' };\n`;
const sha = (text: string) => createHash('sha256').update(text).digest('hex');

for (const [what, file, edit] of [
  ['the rule file', 'race.mjs', (d: string) => writeFileSync(join(d, 'race.mjs'), rule('written meanwhile'))],
  ['a file it imports', 'lib/note.mjs', (d: string) => writeFileSync(join(d, 'lib', 'note.mjs'), note('written meanwhile'))],
] as const) {
  it(`${what} written between its hash and its import is refused, not run under the old hash; loaded again, it is the new code`, async () => {
    const d = join(dir, file.replace(/\W/g, '-'));
    mkdirSync(join(d, 'lib'), { recursive: true });
    writeFileSync(join(d, 'race.mjs'), rule('as hashed'));
    writeFileSync(join(d, 'lib', 'note.mjs'), note('as hashed'));
    beforeImport = () => edit(d);
    await expect(loadRuleFiles(['race.mjs'], d)).rejects.toThrow(`rule file race.mjs: ${file} changed while it was being loaded (it is no longer the file hashed); load it again`);
    expect(beforeImport).toBeUndefined(); // the write was made
    const again = await loadRuleFiles(['race.mjs'], d);
    const r = again.rules[0]!;
    expect([r.description, r.messages!['race-rule.note']!.en]).toEqual(file === 'race.mjs' ? ['written meanwhile', 'as hashed'] : ['as hashed', 'written meanwhile']);
    const lines = `${sha(file === 'race.mjs' ? rule('written meanwhile') : rule('as hashed'))}  race.mjs\n${sha(note(file === 'race.mjs' ? 'as hashed' : 'written meanwhile'))}  lib/note.mjs\n`;
    expect(again.files[0]!.sha256).toBe(sha(lines));
  });
}

it('a file without imports (Node imports it by a URL with its hash) written meanwhile is refused; put back, it is the hashed code that runs, not the module of the refused import', async () => {
  const d = join(dir, 'plain');
  mkdirSync(d, { recursive: true });
  const plain = (description: string) => rule(description).replace(/^import .*\n/, '').replace("'race-rule.note': note", "'race-rule.note': { en: 'a note', nb: 'et notat', de: 'eine Notiz' }");
  writeFileSync(join(d, 'plain.mjs'), plain('as hashed'));
  afterGraph = () => writeFileSync(join(d, 'plain.mjs'), plain('written meanwhile'));
  await expect(loadRuleFiles(['plain.mjs'], d)).rejects.toThrow('rule file plain.mjs: plain.mjs changed while it was being loaded (it is no longer the file hashed); load it again');
  expect(afterGraph).toBeUndefined();
  // The edit undone: the file is the one hashed before. Node would give the URL of that hash the
  // module it read then, the edit's.
  writeFileSync(join(d, 'plain.mjs'), plain('as hashed'));
  const again = await loadRuleFiles(['plain.mjs'], d);
  expect(again.rules[0]!.description).toBe('as hashed');
  expect(again.files[0]!.sha256).toBe(sha(plain('as hashed')));
});
