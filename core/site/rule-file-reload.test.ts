// A running site's reload (`tilstand config reload`, SIGHUP) loads and checks its rule files as the
// next start would, and imports again only a file whose code changed (its SHA-256 over the file
// and the files it imports): an unchanged file is checked on the module imported at start, so a
// site reloaded often does not grow by a module each time. core/agents rule-files.test.ts has the
// loader's own cases (a refused edit, a file no longer named, .mjs).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initDataDir } from './init.ts';
import { Site } from './site.ts';

const FAST = { N: 1024, r: 8, p: 1 };
const RULE_PATH = 'rules/counted.mts';
const [RULE_KEY, HELPER_KEY] = ['tilstand-test:site-reload-rule', 'tilstand-test:site-reload-helper'];

/** How many times the module body that counts under `key` ran in this process. */
const runs = (key: string): number => ((globalThis as Record<string, unknown>)[key] as number | undefined) ?? 0;
const counts = (key: string) => `(globalThis as any)['${key}'] = ((globalThis as any)['${key}'] ?? 0) + 1;\n`;
/** The rule file: counts its evaluations, takes its description from a helper of its own. */
const ruleFile = (version: string, nb = 'et notat') =>
  `import { tag } from './lib/tag.mts';\n${counts(RULE_KEY)}export default { id: 'counted', version: '${version}', description: tag, messages: { 'counted.note': { en: 'a note', nb: '${nb}', de: 'eine Notiz' } }, evaluate: () => [], recheck: () => ({ holds: true }), effectSeen: () => false };\n`;
const helper = (text: string) => `${counts(HELPER_KEY)}export const tag = '${text}';\n`;

let dir: string;
let data: string;
let site: Site | undefined;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-rule-file-reload-'));
  data = join(dir, 'site');
  await initDataDir({ data, site: 'north', scrypt: FAST, config: (c) => ({ ...c, agent: { ...c.agent, ruleFiles: [RULE_PATH] } }) });
  mkdirSync(join(data, 'rules', 'lib'), { recursive: true });
  writeFileSync(join(data, RULE_PATH), ruleFile('1'));
  writeFileSync(join(data, 'rules', 'lib', 'tag.mts'), helper('one'));
  site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
}, 60_000);
afterAll(async () => {
  await site?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('a reload of a site with a rule file', () => {
  it('imports the rule file again only when its code or a file it imports changed; a refused edit leaves the rules that run', async () => {
    const s = site!;
    const started = s.status().agentRules?.at(-1);
    expect([runs(RULE_KEY), runs(HELPER_KEY), started?.id]).toEqual([1, 1, 'counted']);
    // No change: checked on the module imported at start, not imported again.
    expect(await s.reloadConfig()).toEqual({ applied: [], restartNeeded: [] });
    expect(await s.reloadConfig()).toEqual({ applied: [], restartNeeded: [] });
    expect([runs(RULE_KEY), runs(HELPER_KEY)]).toEqual([1, 1]);

    // The rule file edited: imported again (its helper with it), once.
    writeFileSync(join(data, RULE_PATH), ruleFile('2'));
    expect(await s.reloadConfig()).toEqual({ applied: [], restartNeeded: ['agent.ruleFiles'] });
    expect(await s.reloadConfig()).toEqual({ applied: [], restartNeeded: ['agent.ruleFiles'] });
    expect([runs(RULE_KEY), runs(HELPER_KEY)]).toEqual([2, 2]);

    // Only the file it imports edited: a change of its code, imported again.
    writeFileSync(join(data, 'rules', 'lib', 'tag.mts'), helper('two'));
    expect(await s.reloadConfig()).toEqual({ applied: [], restartNeeded: ['agent.ruleFiles'] });
    expect([runs(RULE_KEY), runs(HELPER_KEY)]).toEqual([3, 3]);

    // An edit the checks refuse (no nb template): the reload is refused, the rules of the start run on.
    writeFileSync(join(data, RULE_PATH), ruleFile('3', ''));
    await expect(s.reloadConfig()).rejects.toThrow(/^config agent\.ruleFiles\[0\]: rule file rules\/counted\.mts: default export: rule counted: messages\["counted\.note"\]: expected a template in each of en, nb, de; none in nb$/);
    expect(runs(RULE_KEY)).toBe(4);
    expect(s.status().agentRules?.at(-1)).toEqual(started);
    expect(s.runAgent().ruleErrors).toEqual([]);
    // Put back as it was before that edit: the good module held since is checked, not imported again.
    writeFileSync(join(data, RULE_PATH), ruleFile('2'));
    expect(await s.reloadConfig()).toEqual({ applied: [], restartNeeded: ['agent.ruleFiles'] });
    expect(runs(RULE_KEY)).toBe(4);
  });
});
