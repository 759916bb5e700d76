// core/agents' loader of rules of one's own (rule-files.ts): what a replay's rules config and a
// site's config.json `agent.ruleFiles` both go through. A refusal names the file's place in the
// list, so each caller names its own key; the rules in force put a file's new version of an
// installed rule in that rule's place and a new rule after the installed ones.
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_RULES, loadRuleFiles, RuleFileError, rulesInForce, stockReorder } from './index.ts';

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
