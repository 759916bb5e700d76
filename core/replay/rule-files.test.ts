// A rules config's `ruleFiles`: a rule of one's own, from a file beside the config, replayed
// without editing the checkout. Its proposals show as added in the difference report, which names
// the file and its bytes' SHA-256; two runs with it are byte-identical; a rule with an installed
// rule's id and a version of its own replaces that rule in that run only; a file that does not
// load, exports no Rule, lacks a language of a message or repeats an installed version is refused
// as a bad option (exit 2), naming the file and what was expected.
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assignJob, DEFAULT_RULES } from '../agents/index.ts';
import { ruleFileCode } from '../agents/rule-files.ts';
import { openAgentSpec } from './agent-spec.ts';
import { DemoEvents } from './demo-events.ts';
import type { DiffReport } from './diff.ts';
import { exportFixture, makeCut } from './export.ts';
import type { ReplayProposal } from './fixture.ts';
import { defaultScratchParent, runReplay, type RunManifest } from './replay.ts';
import { LiveSite, replayCli, T0 } from './test-support.ts';

const MIN = 60_000;
const JOB_WATCH = join(import.meta.dirname, 'testdata', 'job-watch.ts');
const STOCK_V = DEFAULT_RULES.find((r) => r.id === 'stock-reorder')!.version;

let dir: string;
let fixture: string;

beforeAll(async () => {
  dir = mkdtempSync(join(defaultScratchParent(), 'tilstand-replay-rule-files-'));
  const site = new LiveSite();
  try {
    const gen = new DemoEvents({ site: site.site, seed: 5 });
    site.receive(gen.initial(T0 + 100));
    for (let i = 0; i < 120; i++) site.receive(gen.step(T0 + 1000 + i * 2000));
    await site.advance(T0 + 90_000);
    makeCut(site.catalog, site.database, 'replay-own', { clock: site.clock });
    await site.advance(T0 + 5 * MIN);
    site.close();
    fixture = join(dir, 'fixture');
    await exportFixture({ data: site.dir, tag: 'own', untilMs: T0 + 5 * MIN, atMs: T0 + 90_000, out: fixture });
  } finally {
    site.remove();
  }
  await runReplay({ fixture, out: join(dir, 'run-default') });
}, 120_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const read = (d: string, f: string) => readFileSync(join(dir, d, f), 'utf8');
const proposals = (run: string) => JSON.parse(read(run, 'proposals.json')) as ReplayProposal[];
const manifest = (run: string) => JSON.parse(read(run, 'run.json')) as RunManifest;
const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

/** A rules config in the test folder; rule files are given relative to it. */
function config(name: string, o: Record<string, unknown>): string {
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify(o));
  return path;
}

/** A module's text as a rule file in the test folder. */
function ruleFile(name: string, text: string): string {
  writeFileSync(join(dir, name), text);
  return `./${name}`;
}

/** A self-contained rule module (no imports): `rule` is the object literal's body. */
const ruleModule = (rule: string) => `export default {\n${rule}\n  evaluate: () => [],\n  recheck: () => ({ holds: true }),\n  effectSeen: () => false,\n};\n`;
const MESSAGES = `messages: { '%ID%.note': { en: 'a note', nb: 'et notat', de: 'eine Notiz' } },`;
const rule = (id: string, version: string, messages = MESSAGES) => ruleModule(`  id: '${id}', version: '${version}', description: 'x', ${messages.replaceAll('%ID%', id)}`);

describe('a rules config with rule files', () => {
  it('runs a rule of its own: its proposals show as added, the report names its file, and two runs are byte-identical', async () => {
    const agent = config('job-watch', { label: 'job-watch', ruleFiles: [relative(dir, JOB_WATCH)] });
    for (const out of ['run-own-a', 'run-own-b']) {
      const run = await replayCli(['replay', 'run', '--fixture', fixture, '--agent', agent, '--out', join(dir, out)]);
      expect(run.code, run.err).toBe(0);
    }
    for (const f of ['run.json', 'proposals.json', 'agent-runs.json', 'decisions.json', 'human-decisions.json']) expect(read('run-own-b', f), f).toBe(read('run-own-a', f));

    const m = manifest('run-own-a');
    // job-watch.ts imports core/agents from the checkout: its SHA-256 covers those files too
    // (core/agents ruleFileHash), each listed by its path from the rule file's folder.
    const code = await ruleFileCode(JOB_WATCH);
    expect(code.imports.map((i) => i.path)).toContain('../../agents/index.ts');
    expect(code.sha256).not.toBe(sha256(JOB_WATCH));
    const file = { path: relative(dir, JOB_WATCH), sha256: code.sha256, imports: code.imports.map(({ path, sha256: s }) => ({ path, sha256: s })) };
    expect(m.agent.rules.map((r) => r.id)).toEqual([...DEFAULT_RULES.map((r) => r.id), 'job-watch']);
    expect(m.agent.rules.at(-1)).toEqual({ id: 'job-watch', version: '1', file });
    expect(m.agent.ruleFiles).toEqual([{ ...file, rules: ['job-watch'], packages: code.packages }]);
    // A run without rule files records its agent as before: no file keys.
    expect(Object.keys(manifest('run-default').agent).sort()).toEqual(['config', 'label', 'rules', 'source']);
    const watched = proposals('run-own-a').filter((p) => p.ruleId === 'job-watch');
    expect(watched.length).toBeGreaterThan(0);
    expect(watched[0]!.explanation).toMatch(/^Job .+ waits for a resource\.$/);

    const diff = await replayCli(['replay', 'diff', join(dir, 'run-default'), join(dir, 'run-own-a'), '--out', join(dir, 'diff-own')]);
    expect(diff.code, diff.err).toBe(0);
    expect(diff.out).toContain(`default → job-watch: ${watched.length} added, 0 removed, 0 changed`);
    const report = JSON.parse(read('diff-own', 'report.json')) as DiffReport;
    expect(report.agentChanges.rules).toEqual([{ id: 'job-watch', baseline: null, candidate: '1', candidateFile: file }]);
    expect(report.perRule['job-watch']!.added).toBe(watched.length);
    expect(read('diff-own', 'report.md')).toContain(`rule job-watch: not run → version 1 from rule file ${file.path} (sha256 ${file.sha256.slice(0, 12)}…, with ${file.imports.length} files it imports)`);

    // The same rule, id and version, from other bytes: the diff lists it as a change of code. A
    // .ts file outside the checkout loads under a package.json of "type": "module", as here.
    mkdirSync(join(dir, 'esm'));
    writeFileSync(join(dir, 'esm', 'package.json'), '{ "type": "module" }\n');
    const copy = join(dir, 'esm', 'job-watch-edited.ts');
    writeFileSync(copy, `${readFileSync(JOB_WATCH, 'utf8').replace("'../../agents/index.ts'", JSON.stringify(join(import.meta.dirname, '..', 'agents', 'index.ts')))}// edited\n`);
    const edited = config('job-watch-edited', { ruleFiles: ['esm/job-watch-edited.ts'] });
    const run = await replayCli(['replay', 'run', '--fixture', fixture, '--agent', edited, '--out', join(dir, 'run-own-edited')]);
    expect(run.code, run.err).toBe(0);
    const d2 = await replayCli(['replay', 'diff', join(dir, 'run-own-a'), join(dir, 'run-own-edited'), '--out', join(dir, 'diff-edited')]);
    expect(d2.code, d2.err).toBe(0);
    const r2 = JSON.parse(read('diff-edited', 'report.json')) as DiffReport;
    const edited2 = await ruleFileCode(copy);
    expect(r2.agentChanges.rules).toEqual([{ id: 'job-watch', baseline: '1', candidate: '1', baselineFile: file, candidateFile: { path: 'esm/job-watch-edited.ts', sha256: edited2.sha256, imports: edited2.imports.map(({ path, sha256: s }) => ({ path, sha256: s })) } }]);
    expect(r2.summary.added + r2.summary.removed + r2.summary.changed).toBe(0);
  }, 120_000);

  it('counts the proposals of a rule whose id is a name every object has (`constructor`), in run.json and the report', async () => {
    const file = 'constructor-rule.mjs';
    writeFileSync(
      join(dir, file),
      `export default {
  id: 'constructor', version: '1', description: 'x',
  messages: { 'constructor.note': { en: 'job {job}', nb: 'jobb {job}', de: 'Auftrag {job}' } },
  evaluate: (ctx) => ctx.tables.work_queue.scan().filter((r) => r.status === 'released' && r.assigned_resource === null).map((r) => ({
    action: 'watch_job', module: null, params: { job: String(r.job_id) }, keyParams: ['job'], risk: 'low',
    riskReason: { id: 'constructor.note', params: { job: String(r.job_id) } }, explanation: { id: 'constructor.note', params: { job: String(r.job_id) } },
    evidence: [{ table: 'work_queue', rows: [r] }],
  })),
  recheck: () => ({ holds: true }),
  effectSeen: () => false,
};
`,
    );
    const agent = config('constructor', { label: 'constructor', ruleFiles: [`./${file}`] });
    const run = await replayCli(['replay', 'run', '--fixture', fixture, '--agent', agent, '--out', join(dir, 'run-constructor')]);
    expect(run.code, run.err).toBe(0);
    const made = proposals('run-constructor').filter((p) => p.ruleId === 'constructor').length;
    expect(made).toBeGreaterThan(0);
    expect(manifest('run-constructor').counts.proposalsByRule.constructor).toBe(made);
    const diff = await replayCli(['replay', 'diff', join(dir, 'run-default'), join(dir, 'run-constructor'), '--out', join(dir, 'diff-constructor')]);
    expect(diff.code, diff.err).toBe(0);
    expect((JSON.parse(read('diff-constructor', 'report.json')) as DiffReport).perRule.constructor).toEqual({ baseline: 0, candidate: made, added: made, removed: 0, changed: 0, unchanged: 0 });
  });

  it('a new version of an installed rule replaces it in that run, in its place, and only there', async () => {
    expect(proposals('run-default').filter((p) => p.ruleId === 'assign-job').length).toBeGreaterThan(0);
    const path = ruleFile('assign-nothing.mjs', rule('assign-job', `${assignJob.version}-quiet`));
    const agent = config('assign-nothing', { ruleFiles: [path] });
    const run = await replayCli(['replay', 'run', '--fixture', fixture, '--agent', agent, '--out', join(dir, 'run-quiet')]);
    expect(run.code, run.err).toBe(0);
    const m = manifest('run-quiet');
    expect(m.agent.rules.map((r) => r.id)).toEqual(DEFAULT_RULES.map((r) => r.id));
    expect(m.agent.rules[0]).toEqual({ id: 'assign-job', version: `${assignJob.version}-quiet`, file: { path, sha256: sha256(join(dir, path)) } });
    expect(proposals('run-quiet').filter((p) => p.ruleId === 'assign-job')).toEqual([]);
    const d = await replayCli(['replay', 'diff', join(dir, 'run-default'), join(dir, 'run-quiet'), '--out', join(dir, 'diff-quiet')]);
    expect(d.code, d.err).toBe(0);
    const report = JSON.parse(read('diff-quiet', 'report.json')) as DiffReport;
    expect(report.agentChanges.rules.map((r) => [r.id, r.baseline, r.candidate])).toEqual([['assign-job', assignJob.version, `${assignJob.version}-quiet`]]);
    expect(report.perRule['assign-job']!.removed).toBeGreaterThan(0);
    // The installed rule is untouched: the default agent runs it as before.
    expect((await openAgentSpec('default')).rules).toEqual(DEFAULT_RULES);
    expect((await openAgentSpec(config('plain', {}))).rules[0]).toBe(assignJob);
  }, 120_000);

  it('`rules` lists a rule file’s rules as installed ones, at the file’s version', async () => {
    const path = ruleFile('listed.mjs', rule('listed-rule', '7'));
    const spec = await openAgentSpec(config('listed', { ruleFiles: [path], rules: ['assign-job', { id: 'listed-rule', version: '7' }] }));
    expect(spec.rules.map((r) => `${r.id}@${r.version}`)).toEqual([`assign-job@${assignJob.version}`, 'listed-rule@7']);
    const wrong = config('listed-wrong', { ruleFiles: [path], rules: [{ id: 'listed-rule', version: '8' }] });
    await expect(openAgentSpec(wrong)).rejects.toThrow(`--agent ${wrong}: agent rules config rules[0]: listed-rule is at version 7 in ${path}, not "8"`);
  });

  it('loads a rule file edited since this process loaded it as it is now: the code that runs is the code hashed', async () => {
    const path = ruleFile('edited.mjs', rule('edited-rule', '1'));
    const agent = config('edited', { ruleFiles: [path] });
    expect((await openAgentSpec(agent)).rules.at(-1)!.version).toBe('1');
    writeFileSync(join(dir, path), rule('edited-rule', '2'));
    const spec = await openAgentSpec(agent);
    expect(spec.rules.at(-1)!.version).toBe('2');
    expect(spec.ruleFiles).toEqual([{ path, sha256: sha256(join(dir, path)), rules: ['edited-rule'] }]);
  });

  it('refuses a bad rule file as a bad option (exit 2), naming the file and what was expected', async () => {
    const refused = async (name: string, text: string | undefined, o: Record<string, unknown> = {}) => {
      const path = text === undefined ? name : ruleFile(name, text);
      const agent = config(`bad-${name}`, { ruleFiles: [path], ...o });
      const r = await replayCli(['replay', 'run', '--fixture', join(dir, 'no-fixture'), '--agent', agent, '--out', join(dir, 'never')]);
      expect(r.code, r.err).toBe(2);
      expect(r.err).toContain(`tilstand: --agent ${agent}: rule file ${path}: `);
      return r.err.slice(`tilstand: --agent ${agent}: rule file ${path}: `.length).trim();
    };
    expect(await refused('syntax.mts', 'export default { id: "x", \n')).toMatch(/^cannot be loaded \(/);
    // A .ts file where Node takes it as CommonJS: the command's loader would not translate it.
    expect(await refused('commonjs.ts', rule('a-rule', '1'))).toBe('a .ts file is loaded only under a package.json with "type": "module" (elsewhere Node takes it as CommonJS, and its default export is not the rule); name it .mts, or give it such a package.json');
    expect(await refused('missing.mjs', undefined)).toMatch(/^cannot be read \(ENOENT/);
    expect(await refused('rule.json', undefined)).toBe('expected a .ts, .mts, .js or .mjs file');
    expect(await refused('none.mjs', 'export const x = 1;\n')).toBe('expected a default export that is a Rule (id, version, description, messages, evaluate, recheck, effectSeen; core/agents rule.ts) or an array of them; it has none');
    expect(await refused('number.mjs', 'export default 42;\n')).toBe('default export: expected a Rule (id, version, description, messages, evaluate, recheck, effectSeen; core/agents rule.ts), got number');
    expect(await refused('no-evaluate.mjs', "export default { id: 'a-rule', version: '1', description: 'x', messages: {}, recheck() {}, effectSeen() {} };\n")).toBe('default export: rule a-rule: evaluate: expected a function, got undefined');
    expect(await refused('no-messages.mjs', rule('a-rule', '1', ''))).toBe('default export: rule a-rule: messages: expected the templates of its messages, id → {en, nb, de}, as the installed rules carry them; got none');
    expect(await refused('no-nb.mjs', rule('a-rule', '1', "messages: { 'a-rule.note': { en: 'a note', de: 'eine Notiz' } },"))).toBe('default export: rule a-rule: messages["a-rule.note"]: expected a template in each of en, nb, de; none in nb');
    expect(await refused('params.mjs', rule('a-rule', '1', "messages: { 'a-rule.note': { en: 'job {job}', nb: 'jobb', de: 'Auftrag {job}' } },"))).toBe('default export: rule a-rule: messages["a-rule.note"].nb: expected the parameters of en ({job}), got none');
    expect(await refused('array.mjs', `export default [${rule('a-rule', '1').slice('export default '.length, -2)}, 5];\n`)).toBe('default export [1]: expected a Rule (id, version, description, messages, evaluate, recheck, effectSeen; core/agents rule.ts), got number');
    // The agent's own checks at start: the id's shape, each id once, message ids under the rule's id.
    expect(await refused('shape.mjs', rule('Job_Watch', '1'))).toBe(`rule id: expected lower-case letters, digits and '-', got "Job_Watch"`);
    expect(await refused('prefix.mjs', rule('a-rule', '1', "messages: { 'other.note': { en: 'a', nb: 'a', de: 'a' } },"))).toBe("rule a-rule: message id 'other.note' must start with 'a-rule.'");
    // An installed rule's id at its installed version is not a new version: two codes, one name.
    expect(await refused('same-version.mjs', rule('stock-reorder', STOCK_V))).toBe(
      `rule stock-reorder has the installed version ${STOCK_V}; a new version of an installed rule needs a version of its own (expected another than ${STOCK_V})`,
    );
    // One rule in two files.
    const first = ruleFile('twice-1.mjs', rule('twice', '1'));
    expect(await refused('twice-2.mjs', rule('twice', '2'), { ruleFiles: [first, './twice-2.mjs'] })).toBe(`rule twice is also in rule file ${first}; expected each rule once`);
  });

  it('a ruleFiles that is not a list of paths is refused naming the key', async () => {
    const agent = config('bad-list', { ruleFiles: './job-watch.ts' });
    const r = await replayCli(['replay', 'run', '--fixture', join(dir, 'no-fixture'), '--agent', agent, '--out', join(dir, 'never')]);
    expect([r.code, r.err]).toEqual([2, `tilstand: --agent ${agent}: agent rules config ruleFiles: expected an array of paths to rule files (.ts, .mts, .js, .mjs), relative to the rules config\n`]);
  });
});

describe('a rule file run by the site bundle', () => {
  // What an installed appliance runs (npm start's dist/site/tilstand.mjs) has tsx's loader
  // switched off: a .ts rule file failed there with "Unknown file extension" until it was loaded
  // through tsx's tsImport. `npm test` builds the bundle first.
  const bundle = resolve(import.meta.dirname, '..', '..', 'dist', 'site', 'tilstand.mjs');
  it('loads a .ts rule file that imports from the checkout, as the sources do', () => {
    expect(existsSync(bundle), `${bundle} is missing: run npm run build`).toBe(true);
    const agent = config('bundle-job-watch', { label: 'job-watch', ruleFiles: [relative(dir, JOB_WATCH)] });
    const r = spawnSync(process.execPath, [bundle, 'replay', 'run', '--fixture', fixture, '--agent', agent, '--out', join(dir, 'run-bundle')], { encoding: 'utf8', timeout: 90_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(read('run-bundle', 'proposals.json')).toBe(read('run-own-a', 'proposals.json'));
  }, 120_000);
});
