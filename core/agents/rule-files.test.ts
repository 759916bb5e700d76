// core/agents' loader of rules of one's own (rule-files.ts): what a replay's rules config and a
// site's config.json `agent.ruleFiles` both go through. A refusal names the file's place in the
// list, so each caller names its own key; the rules in force put a file's new version of an
// installed rule in that rule's place and a new rule after the installed ones.
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_RULES, loadRuleFiles, RuleFileError, rulesInForce, stockReorder } from './index.ts';
import { ruleFileCode, ruleOrigins } from './rule-files.ts';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-agents-rule-files-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A self-contained rule module: no imports. */
const rule = (id: string, version: string) =>
  `export default { id: '${id}', version: '${version}', description: 'x', messages: { '${id}.note': { en: 'a note', nb: 'et notat', de: 'eine Notiz' } }, evaluate: () => [], recheck: () => ({ holds: true }), effectSeen: () => false };\n`;

describe('loadRuleFiles', () => {
  it('loads each file in order, with its SHA-256 and the ids of its rules; rulesInForce places them', async () => {
    const own = rule('own-rule', '1');
    const quiet = rule('stock-reorder', `${stockReorder.version}-quiet`);
    writeFileSync(join(dir, 'new.mjs'), own);
    writeFileSync(join(dir, 'quiet.mjs'), quiet);
    const loaded = await loadRuleFiles(['new.mjs', join(dir, 'quiet.mjs')], dir);
    const sha = (text: string) => createHash('sha256').update(text).digest('hex');
    expect(loaded.files).toEqual([
      { path: 'new.mjs', sha256: sha(own), rules: ['own-rule'] },
      { path: join(dir, 'quiet.mjs'), sha256: sha(quiet), rules: ['stock-reorder'] },
    ]);
    const inForce = rulesInForce(loaded.rules);
    expect(inForce.map((r) => `${r.id}@${r.version}`)).toEqual([...DEFAULT_RULES.map((r) => (r.id === 'stock-reorder' ? `stock-reorder@${stockReorder.version}-quiet` : `${r.id}@${r.version}`)), 'own-rule@1']);
    expect(rulesInForce([])).toEqual(DEFAULT_RULES);
  });

  it('a refusal is a RuleFileError naming the file and its place in the list', async () => {
    writeFileSync(join(dir, 'good.mjs'), rule('good-rule', '1'));
    writeFileSync(join(dir, 'same.mjs'), rule('stock-reorder', stockReorder.version));
    const e = await loadRuleFiles(['good.mjs', 'same.mjs'], dir).then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(RuleFileError);
    expect({ index: (e as RuleFileError).index, path: (e as RuleFileError).path, message: (e as Error).message }).toEqual({
      index: 1,
      path: 'same.mjs',
      message: `rule file same.mjs: rule stock-reorder has the installed version ${stockReorder.version}; a new version of an installed rule needs a version of its own (expected another than ${stockReorder.version})`,
    });
    await expect(loadRuleFiles(['missing.mjs'], dir)).rejects.toThrow(/^rule file missing\.mjs: cannot be read \(ENOENT/);
  });
});

describe('a rule file that imports files of its own', () => {
  const sha = (text: string | Buffer) => createHash('sha256').update(text).digest('hex');
  /** A rule whose message text comes from a helper: what it says shows which helper ran. */
  const ruleWithHelper = (id: string) =>
    `import { note } from './lib/note.mjs';\nimport { tag } from './lib/tag.ts';\nexport default { id: '${id}', version: '1', description: tag, messages: { '${id}.note': note }, evaluate: () => [], recheck: () => ({ holds: true }), effectSeen: () => false };\n`;
  const note = (en: string) => `export const note = { en: '${en}', nb: 'et notat', de: 'eine Notiz' };\n`;

  it('lists each local file it imports (path from its folder, SHA-256) and hashes them all with it; an edited helper is another hash, and runs', async () => {
    const own = join(dir, 'graph');
    mkdirSync(join(own, 'lib'), { recursive: true });
    writeFileSync(join(own, 'package.json'), '{ "type": "module" }\n');
    const text = ruleWithHelper('graph-rule');
    writeFileSync(join(own, 'graph.mjs'), text);
    writeFileSync(join(own, 'lib', 'note.mjs'), note('a note'));
    // A TypeScript helper that itself imports one, and a type only (erased: not an import).
    writeFileSync(join(own, 'lib', 'tag.ts'), `import type { Rule } from './types.ts';\nimport { suffix } from './suffix.ts';\nexport const tag: Rule['description'] = 'tagged ' + suffix;\n`);
    writeFileSync(join(own, 'lib', 'suffix.ts'), `export const suffix = 'one';\n`);
    const files = ['lib/note.mjs', 'lib/suffix.ts', 'lib/tag.ts'];
    const expected = () => {
      const imports = files.map((p) => ({ path: p, sha256: sha(readFileSync(join(own, p))) }));
      // sha256sum's lines of the rule file and then its imports, hashed: `sha256sum graph.mjs lib/… | sha256sum`.
      const all = [`${sha(text)}  graph.mjs\n`, ...imports.map((i) => `${i.sha256}  ${i.path}\n`)].join('');
      return { path: 'graph/graph.mjs', sha256: sha(all), rules: ['graph-rule'], imports };
    };
    const first = await loadRuleFiles(['graph/graph.mjs'], dir);
    expect(first.files).toEqual([expected()]);
    expect(first.rules[0]!.description).toBe('tagged one');
    expect(ruleOrigins(first.rules, first.files)).toEqual([{ id: 'graph-rule', version: '1', file: { path: 'graph/graph.mjs', sha256: expected().sha256, imports: expected().imports } }]);

    // The rule file as it was, a helper two imports down edited: another hash, and the edited code runs.
    writeFileSync(join(own, 'lib', 'suffix.ts'), `export const suffix = 'two';\n`);
    const second = await loadRuleFiles(['graph/graph.mjs'], dir);
    expect(second.files).toEqual([expected()]);
    expect(second.files[0]!.sha256).not.toBe(first.files[0]!.sha256);
    expect(second.rules[0]!.description).toBe('tagged two');
    writeFileSync(join(own, 'lib', 'note.mjs'), note('another note'));
    const third = await loadRuleFiles(['graph/graph.mjs'], dir);
    expect(third.files[0]!.sha256).not.toBe(second.files[0]!.sha256);
    expect(third.rules[0]!.messages?.['graph-rule.note']?.en).toBe('another note');
  });

  it('a type-only import does not count: the example door-down.mts loads where its type’s path is not, named by its bytes alone', async () => {
    const example = join(import.meta.dirname, '..', '..', 'docs', 'examples', 'rules', 'door-down.mts');
    mkdirSync(join(dir, 'site', 'rules'), { recursive: true });
    copyFileSync(example, join(dir, 'site', 'rules', 'door-down.mts'));
    const loaded = await loadRuleFiles(['rules/door-down.mts'], join(dir, 'site'));
    expect(loaded.files).toEqual([{ path: 'rules/door-down.mts', sha256: sha(readFileSync(example)), rules: ['door-down'] }]);
  });

  it('a missing import is refused naming it; a package is recorded, not hashed; a file outside the folder is listed as ../', async () => {
    mkdirSync(join(dir, 'odd', 'rules'), { recursive: true });
    writeFileSync(join(dir, 'odd', 'rules', 'gone.mjs'), `import { x } from './lib/gone.mjs';\nexport default x;\n`);
    await expect(loadRuleFiles(['odd/rules/gone.mjs'], dir)).rejects.toThrow(/^rule file odd\/rules\/gone\.mjs: cannot be loaded \(Could not resolve "\.\/lib\/gone\.mjs" at gone\.mjs:1:18\)$/);
    writeFileSync(join(dir, 'odd', 'shared.mjs'), `export const x = 1;\n`);
    writeFileSync(join(dir, 'odd', 'rules', 'uses.mjs'), `import { x } from '../shared.mjs';\nimport { readFileSync } from 'node:fs';\nimport pkg from 'some-package';\nexport default [x, readFileSync, pkg];\n`);
    const code = await ruleFileCode(join(dir, 'odd', 'rules', 'uses.mjs'));
    expect(code.imports.map((i) => i.path)).toEqual(['../shared.mjs']);
    expect(code.packages).toEqual(['some-package']);
  });
});
