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
import { ruleFileCode, RuleFileModules, ruleOrigins } from './rule-files.ts';

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

  // A rule's id and version are stored as they are with each of its proposals, and core/lsm's
  // writers refuse a string with a lone surrogate (half of a UTF-16 pair): a version with one
  // failed every run's submit, every rule's proposals with it. It is refused where the file is
  // loaded, as a draft's text with one is the rule's error in a run (lone-surrogate-draft.test.ts).
  it('refuses a rule whose id or version has a lone surrogate, naming the file', async () => {
    writeFileSync(join(dir, 'torn-version.mjs'), rule('torn-rule', '1\\ud800'));
    writeFileSync(join(dir, 'torn-id.mjs'), rule('torn-\\ud800', '1'));
    await expect(loadRuleFiles(['torn-version.mjs'], dir)).rejects.toThrow('rule file torn-version.mjs: rule torn-rule: version: expected valid Unicode text, got "1\\ud800" (a lone surrogate, half of a character pair)');
    await expect(loadRuleFiles(['torn-id.mjs'], dir)).rejects.toThrow(/^rule file torn-id\.mjs: rule id: expected lower-case letters, digits and '-', got "torn-\\ud800"$/);
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

describe('an import whose name is computed when the file runs', () => {
  // The SHA-256 names the rule file and the local files it imports, found by bundling it; an
  // import(name) or require(name) of a name computed at run time is a file the bundler cannot see,
  // so the hash did not cover the code it loaded. Refused, naming where it is.
  it('is refused, in the rule file or in a file it imports, naming the place; a literal one (a package, a helper) is not', async () => {
    const own = join(dir, 'computed');
    mkdirSync(join(own, 'lib'), { recursive: true });
    writeFileSync(join(own, 'lib', 'x.mjs'), rule('computed-rule', '1'));
    writeFileSync(join(own, 'by-name.mjs'), `const name = './lib/x.mjs';\nconst m = await import(name);\nexport default m.default;\n`);
    await expect(loadRuleFiles(['computed/by-name.mjs'], dir)).rejects.toThrow(
      /^rule file computed\/by-name\.mjs: imports a module whose name is computed when it runs, at by-name\.mjs:2:16 \(const m = await import\(name\);\): its SHA-256 cannot cover that code; import it by a literal path/,
    );
    writeFileSync(join(own, 'lib', 'load.cjs'), `const n = './x.mjs';\nmodule.exports = require(n);\n`);
    writeFileSync(join(own, 'via-helper.mjs'), `import load from './lib/load.cjs';\nexport default load;\n`);
    await expect(loadRuleFiles(['computed/via-helper.mjs'], dir)).rejects.toThrow(/^rule file computed\/via-helper\.mjs: imports a module whose name is computed when it runs, at lib\/load\.cjs:2:17 /);
    writeFileSync(join(own, 'literal.mjs'), `const m = await import('./lib/x.mjs');\nconst fs = await import('node:fs');\nexport default fs ? m.default : undefined;\n`);
    const loaded = await loadRuleFiles(['computed/literal.mjs'], dir);
    expect(loaded.files.map((f) => [f.path, f.imports?.map((i) => i.path)])).toEqual([['computed/literal.mjs', ['lib/x.mjs']]]);
  });
});

describe('a loader that holds its modules (a site: its start and its reloads)', () => {
  /** How many times a module body that counts under `key` ran in this process. */
  const runs = (key: string): number => ((globalThis as Record<string, unknown>)[key] as number | undefined) ?? 0;
  /** A line that counts, under `key` on globalThis, each time the module it is in is evaluated. */
  const counts = (key: string) => `(globalThis as any)['${key}'] = ((globalThis as any)['${key}'] ?? 0) + 1;\n`;
  /** A self-contained TypeScript rule module that counts its evaluations. */
  const counted = (key: string, id: string, version: string, description = 'x') =>
    `${counts(key)}export default { id: '${id}', version: '${version}', description: '${description}', messages: { '${id}.note': { en: 'a note', nb: 'et notat', de: 'eine Notiz' } }, evaluate: () => [], recheck: () => ({ holds: true }), effectSeen: () => false };\n`;

  it('a file whose code did not change is not imported again; an edited one is, its new rule is the one loaded, and it takes the old module\'s place', async () => {
    const key = 'tilstand-test:held-unchanged';
    const own = join(dir, 'held');
    mkdirSync(own, { recursive: true });
    writeFileSync(join(own, 'held.mts'), counted(key, 'held-rule', '1'));
    const modules = new RuleFileModules();
    const first = await loadRuleFiles(['held/held.mts'], dir, modules);
    expect([runs(key), first.rules[0]!.version]).toEqual([1, '1']);
    const again = await loadRuleFiles(['held/held.mts'], dir, modules);
    const third = await loadRuleFiles(['held/held.mts'], dir, modules);
    expect(runs(key)).toBe(1);
    expect(third.rules[0]).toBe(first.rules[0]);
    expect(third.files).toEqual(again.files);

    writeFileSync(join(own, 'held.mts'), counted(key, 'held-rule', '2'));
    const edited = await loadRuleFiles(['held/held.mts'], dir, modules);
    expect([runs(key), edited.rules[0]!.version]).toEqual([2, '2']);
    expect(edited.files[0]!.sha256).not.toBe(first.files[0]!.sha256);
    await loadRuleFiles(['held/held.mts'], dir, modules);
    expect([runs(key), modules.size]).toEqual([2, 1]);
    // Back to the first code: the first module was let go when the edit took its place.
    writeFileSync(join(own, 'held.mts'), counted(key, 'held-rule', '1'));
    expect((await loadRuleFiles(['held/held.mts'], dir, modules)).rules[0]).not.toBe(first.rules[0]);
    expect(runs(key)).toBe(3);
    // Without a loader's modules (a replay) each load imports the file, as the fixture holds it.
    await loadRuleFiles(['held/held.mts'], dir);
    expect(runs(key)).toBe(4);
  });

  it('an edit of a file it imports, and of nothing else, is imported again', async () => {
    const [key, helperKey] = ['tilstand-test:held-graph', 'tilstand-test:held-graph-helper'];
    const own = join(dir, 'held-graph');
    mkdirSync(join(own, 'lib'), { recursive: true });
    const helper = (text: string) => `${counts(helperKey)}export const tag = '${text}';\n`;
    writeFileSync(join(own, 'lib', 'tag.mts'), helper('one'));
    writeFileSync(join(own, 'graph.mts'), `import { tag } from './lib/tag.mts';\n${counted(key, 'held-graph', '1').replace("description: 'x'", 'description: tag')}`);
    const modules = new RuleFileModules();
    const first = await loadRuleFiles(['held-graph/graph.mts'], dir, modules);
    await loadRuleFiles(['held-graph/graph.mts'], dir, modules);
    expect([runs(key), runs(helperKey), first.rules[0]!.description]).toEqual([1, 1, 'one']);
    writeFileSync(join(own, 'lib', 'tag.mts'), helper('two'));
    const edited = await loadRuleFiles(['held-graph/graph.mts'], dir, modules);
    expect([runs(key), runs(helperKey), edited.rules[0]!.description]).toEqual([2, 2, 'two']);
  });

  it('a refused edit leaves the good module held: the file put back is not imported again; a file no longer named is let go', async () => {
    const key = 'tilstand-test:held-refused';
    const own = join(dir, 'held-refused');
    mkdirSync(own, { recursive: true });
    const good = counted(key, 'held-refused', '1');
    writeFileSync(join(own, 'r.mts'), good);
    const modules = new RuleFileModules();
    const first = await loadRuleFiles(['held-refused/r.mts'], dir, modules);
    expect(runs(key)).toBe(1);
    // Code that does not compile: refused before anything runs.
    writeFileSync(join(own, 'r.mts'), `${good}export const = ;\n`);
    await expect(loadRuleFiles(['held-refused/r.mts'], dir, modules)).rejects.toThrow(/^rule file held-refused\/r\.mts: cannot be loaded/);
    // Code that runs, but whose rule the checks refuse (no nb template).
    writeFileSync(join(own, 'r.mts'), good.replace("nb: 'et notat', ", ''));
    await expect(loadRuleFiles(['held-refused/r.mts'], dir, modules)).rejects.toThrow(/^rule file held-refused\/r\.mts: default export: rule held-refused: messages\["held-refused\.note"\]: expected a template in each of en, nb, de; none in nb$/);
    expect(runs(key)).toBe(2);
    writeFileSync(join(own, 'r.mts'), good);
    const back = await loadRuleFiles(['held-refused/r.mts'], dir, modules);
    expect(runs(key)).toBe(2);
    expect(back.rules[0]).toBe(first.rules[0]);

    // A .mjs file (Node's import) is held the same way; the .mts file, no longer named, is let go.
    writeFileSync(join(own, 'plain.mjs'), rule('held-plain', '1'));
    const plain = await loadRuleFiles(['held-refused/plain.mjs'], dir, modules);
    expect(modules.size).toBe(1);
    expect((await loadRuleFiles(['held-refused/plain.mjs'], dir, modules)).rules[0]).toBe(plain.rules[0]);
    writeFileSync(join(own, 'plain.mjs'), rule('held-plain', '2'));
    expect((await loadRuleFiles(['held-refused/plain.mjs'], dir, modules)).rules[0]!.version).toBe('2');
  });
});
