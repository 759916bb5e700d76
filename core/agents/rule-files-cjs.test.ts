// A .js rule file where no package.json says "type": "module" is CommonJS (`module.exports = …`),
// as Node 20 takes it. Node keeps a CommonJS module by its file name (require.cache), whatever the
// query of the URL it was imported by: the `?sha256=<hash>` that gives an edited ES module a module
// of its own gave an edited CommonJS file, and the files it requires, the module of their first
// import. A second load in the same process (a site's reload, which checks the files as the next
// start would) then checked the old code under the new file's SHA-256: an edit the next start
// refuses passed the reload. Run in a plain Node process (with tsx, as the site runs from the
// sources): vitest's own module loading does not keep CommonJS modules as Node does.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-agents-rule-files-cjs-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * The script: loads a CommonJS rule file, edits its description (in the file it requires, or in
 * itself), then its nb template, and the template away, loading it again after each edit; prints
 * what each load gave.
 */
const script = (d: string, held: boolean, helper: boolean) => `
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
const { loadRuleFiles, RuleFileModules } = await import(${JSON.stringify(pathToFileURL(join(ROOT, 'core/agents/rule-files.ts')).href)});
const d = ${JSON.stringify(d)};
const modules = ${held ? 'new RuleFileModules()' : 'undefined'};
const rule = (text, nb) => (${helper} ? "const { text } = require('./lib/text.js');\\n" : 'const text = ' + JSON.stringify(text) + ';\\n') + "module.exports = { id: 'cjs-rule', version: '1', description: text, messages: { 'cjs-rule.note': { en: 'a note', nb: '" + nb + "', de: 'eine Notiz' } }, evaluate: () => [], recheck: () => ({ holds: true }), effectSeen: () => false };\\n";
const helper = (text) => writeFileSync(join(d, 'lib', 'text.js'), 'module.exports = { text: ' + JSON.stringify(text) + ' };\\n');
mkdirSync(join(d, 'lib'), { recursive: true });
const out = [];
const load = async () => {
  try {
    const l = await loadRuleFiles(['rule.js'], d, modules);
    out.push({ description: l.rules[0].description, nb: l.rules[0].messages['cjs-rule.note'].nb });
  } catch (e) {
    out.push({ refused: e.message });
  }
};
if (${helper}) helper('one');
writeFileSync(join(d, 'rule.js'), rule('one', 'et notat'));
await load();
if (${helper}) helper('two');
else writeFileSync(join(d, 'rule.js'), rule('two', 'et notat'));
await load();
writeFileSync(join(d, 'rule.js'), rule('two', 'ny tekst'));
await load();
writeFileSync(join(d, 'rule.js'), rule('two', ''));
await load();
process.stdout.write(JSON.stringify(out));
`;

describe('a CommonJS rule file loaded again in the same process', () => {
  // Without a file it requires (import()) and with one (tsx's tsImport); without a loader that
  // holds its modules (a replay, config check) and with one (a site).
  for (const [helper, held] of [[false, false], [false, true], [true, false], [true, true]] as const) {
    it(`is checked as it is now${helper ? ', with the file it requires' : ''}${held ? ' (a loader that holds its modules, as a site)' : ''}`, () => {
      const d = mkdtempSync(join(dir, 'site-'));
      const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script(d, held, helper)], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
      expect(JSON.parse(out)).toEqual([
        { description: 'one', nb: 'et notat' },
        { description: 'two', nb: 'et notat' },
        { description: 'two', nb: 'ny tekst' },
        { refused: 'rule file rule.js: default export: rule cjs-rule: messages["cjs-rule.note"]: expected a template in each of en, nb, de; none in nb' },
      ]);
    }, 60_000);
  }
});
