// A rule file that imports files of its own (`import { first } from './lib/pick.ts'`): the SHA-256
// that names it covers them (core/agents ruleFileHash), so a diff between two runs whose rule file
// is the same but whose helper was edited lists the rule as changed; `replay export` copies them
// into the fixture at their paths beside the rule file, so `replay run --run-rule-files` runs the
// same code with the site's files gone; a file that imports one outside its folder is refused at
// the export, naming the import, and a package it imports is said not to travel.
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DemoEvents } from './demo-events.ts';
import type { DiffReport } from './diff.ts';
import { exportFixture, makeCut } from './export.ts';
import { openFixture, type FixtureManifest, type ReplayProposal } from './fixture.ts';
import { defaultScratchParent, runReplay, type RunManifest } from './replay.ts';
import { LiveSite, replayCli, T0 } from './test-support.ts';

const MIN = 60_000;
const sha = (b: string | Buffer) => createHash('sha256').update(b).digest('hex');

/** The rule: a notice for the jobs the helper picks; what it picks, and the message, are the helper's. */
const RULE = `import { PICK_NOTE, pick } from './lib/pick.ts';
export default {
  id: 'pick-watch',
  version: '1',
  description: 'A notice for the jobs lib/pick.ts picks.',
  messages: { 'pick-watch.note': PICK_NOTE, 'pick-watch.risk': { en: 'a notice', nb: 'et varsel', de: 'ein Hinweis' }, 'pick-watch.gone': { en: 'gone', nb: 'borte', de: 'weg' } },
  evaluate(ctx: any) {
    return pick([...ctx.tables.work_queue.scan()]).map((r: any) => ({
      action: 'watch_job', module: null, params: { job: String(r.job_id) }, keyParams: ['job'], risk: 'low',
      riskReason: { id: 'pick-watch.risk', params: {} }, explanation: { id: 'pick-watch.note', params: { job: String(r.job_id) } },
      evidence: [{ table: 'work_queue', rows: [r] }],
    }));
  },
  recheck(ctx: any, p: any) {
    return ctx.tables.work_queue.get({ job_id: p.params.job }) ? { holds: true } : { holds: false, reason: { id: 'pick-watch.gone', params: {} } };
  },
  effectSeen: () => false,
};
`;
/** The helper, which imports one of its own: the first `n` jobs by id. */
const PICK = `import { N } from './n.ts';
export const PICK_NOTE = { en: 'Job {job} was picked.', nb: 'Jobb {job} ble valgt.', de: 'Auftrag {job} wurde gewählt.' };
export const pick = (rows: any[]) => rows.sort((a, b) => (String(a.job_id) < String(b.job_id) ? -1 : 1)).slice(0, N);
`;
const n = (count: number) => `export const N = ${count};\n`;

let dir: string;
let data: string;
let fixture: string;

beforeAll(async () => {
  dir = mkdtempSync(join(defaultScratchParent(), 'tilstand-replay-rule-imports-'));
  const site = new LiveSite({ parent: dir });
  data = site.dir;
  const gen = new DemoEvents({ site: site.site, seed: 7 });
  site.receive(gen.initial(T0 + 100));
  for (let i = 0; i < 60; i++) site.receive(gen.step(T0 + 1000 + i * 2000));
  await site.advance(T0 + 90_000);
  makeCut(site.catalog, site.database, 'replay-imports', { clock: site.clock });
  await site.advance(T0 + 3 * MIN);
  site.close();
  // The site's rule file and its helpers, named in its config.json (the live agent here ran the
  // installed rules: what is tested is what the export carries and the replay runs).
  mkdirSync(join(data, 'rules', 'lib'), { recursive: true });
  writeFileSync(join(data, 'rules', 'package.json'), '{ "type": "module" }\n');
  writeFileSync(join(data, 'rules', 'pick-watch.ts'), RULE);
  writeFileSync(join(data, 'rules', 'lib', 'pick.ts'), PICK);
  writeFileSync(join(data, 'rules', 'lib', 'n.ts'), n(2));
  const config = JSON.parse(readFileSync(join(data, 'config.json'), 'utf8')) as Record<string, Record<string, unknown>>;
  writeFileSync(join(data, 'config.json'), JSON.stringify({ ...config, agent: { ...config.agent, ruleFiles: ['rules/pick-watch.ts'] } }));
  fixture = join(dir, 'fixture');
  await exportFixture({ data, tag: 'imports', untilMs: T0 + 3 * MIN, atMs: T0 + 90_000, out: fixture });
}, 120_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const read = (run: string, f: string) => readFileSync(join(dir, run, f), 'utf8');
const imports = () => ['lib/n.ts', 'lib/pick.ts'].map((p) => ({ path: p, sha256: sha(readFileSync(join(data, 'rules', p))) }));
const codeHash = () => sha([`${sha(RULE)}  pick-watch.ts\n`, ...imports().map((i) => `${i.sha256}  ${i.path}\n`)].join(''));

describe('replay export of a rule file with imports of its own', () => {
  it('copies them beside it, records them, and --run-rule-files runs them from the fixture with the site’s files gone', async () => {
    const m = JSON.parse(readFileSync(join(fixture, 'fixture.json'), 'utf8')) as FixtureManifest;
    const live = { path: 'rules/pick-watch.ts', sha256: codeHash(), file: 'config/rules/0/pick-watch.ts', imports: imports() };
    expect(m.liveAgent.ruleFiles).toEqual([live]);
    for (const [inFixture, onSite] of [['pick-watch.ts', 'pick-watch.ts'], ['lib/pick.ts', 'lib/pick.ts'], ['lib/n.ts', 'lib/n.ts']]) {
      expect(readFileSync(join(fixture, 'config', 'rules', '0', inFixture), 'utf8')).toBe(readFileSync(join(data, 'rules', onSite), 'utf8'));
    }
    expect(JSON.parse(readFileSync(join(fixture, 'config', 'rules', '0', 'package.json'), 'utf8'))).toEqual({ type: 'module' });
    openFixture(fixture, dir).close(); // the manifest's check of the files and their hashes holds

    renameSync(join(data, 'rules'), join(data, 'rules-moved'));
    try {
      const run = await replayCli(['replay', 'run', '--fixture', fixture, '--out', join(dir, 'run-a'), '--run-rule-files']);
      expect(run.code, run.err).toBe(0);
      const again = await replayCli(['replay', 'run', '--fixture', fixture, '--out', join(dir, 'run-b'), '--run-rule-files']);
      expect(again.code, again.err).toBe(0);
    } finally {
      renameSync(join(data, 'rules-moved'), join(data, 'rules'));
    }
    for (const f of ['run.json', 'proposals.json']) expect(read('run-b', f), f).toBe(read('run-a', f));
    const manifest = JSON.parse(read('run-a', 'run.json')) as RunManifest;
    expect(manifest.agent.ruleFiles).toEqual([{ path: live.path, sha256: live.sha256, rules: ['pick-watch'], imports: live.imports }]);
    const picked = (JSON.parse(read('run-a', 'proposals.json')) as ReplayProposal[]).filter((p) => p.ruleId === 'pick-watch');
    expect(picked.length).toBeGreaterThan(0);
    expect(picked[0]!.explanation).toMatch(/^Job .+ was picked\.$/);
  }, 120_000);

  it('a fixture whose manifest records another hash than its copies make is refused', () => {
    const copy = join(dir, 'fixture-bad');
    cpSync(fixture, copy, { recursive: true });
    try {
      const path = join(copy, 'fixture.json');
      const m = JSON.parse(readFileSync(path, 'utf8')) as FixtureManifest;
      const [f] = m.liveAgent.ruleFiles!;
      writeFileSync(path, JSON.stringify({ ...m, liveAgent: { ...m.liveAgent, ruleFiles: [{ ...f, imports: f!.imports!.slice(1) }] } }));
      expect(() => openFixture(copy, dir)).toThrow('liveAgent.ruleFiles[0]: expected {path, sha256, file, imports?}, file and each import one of its files, sha256 what they hash to');
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  it('a fixture exported before rule files could import (config/rules/<i>-<name>, a .ts as .mts) replays as before', async () => {
    const old = join(dir, 'fixture-old');
    cpSync(fixture, old, { recursive: true });
    rmSync(join(old, 'config', 'rules', '0'), { recursive: true });
    const self = `export default { id: 'self-rule', version: '1', description: 'x', messages: { 'self-rule.note': { en: 'a', nb: 'b', de: 'c' } }, evaluate: () => [], recheck: () => ({ holds: true }), effectSeen: () => false };\n`;
    writeFileSync(join(old, 'config', 'rules', '0-self.mts'), self);
    const path = join(old, 'fixture.json');
    const m = JSON.parse(readFileSync(path, 'utf8')) as FixtureManifest;
    const files = [...m.files.filter((f) => !f.path.startsWith('config/rules/')), { path: 'config/rules/0-self.mts', bytes: Buffer.byteLength(self), sha256: sha(self) }].sort((a, b) => (a.path < b.path ? -1 : 1));
    writeFileSync(path, JSON.stringify({ ...m, files, liveAgent: { ...m.liveAgent, ruleFiles: [{ path: 'rules/self.ts', sha256: sha(self), file: 'config/rules/0-self.mts' }] } }));
    await runReplay({ fixture: old, out: join(dir, 'run-old'), runFixtureRuleFiles: true });
    expect((JSON.parse(read('run-old', 'run.json')) as RunManifest).agent.ruleFiles).toEqual([{ path: 'rules/self.ts', sha256: sha(self), rules: ['self-rule'] }]);
  }, 120_000);

  it('refuses a rule file that imports one outside its folder, naming the import; says that a package does not travel', async () => {
    const config = JSON.parse(readFileSync(join(data, 'config.json'), 'utf8')) as Record<string, Record<string, unknown>>;
    const withRule = (path: string) => writeFileSync(join(data, 'config.json'), JSON.stringify({ ...config, agent: { ...config.agent, ruleFiles: [path] } }));
    writeFileSync(join(data, 'shared.ts'), n(1));
    writeFileSync(join(data, 'rules', 'outside.ts'), `import { N } from '../shared.ts';\nexport default N;\n`);
    withRule('rules/outside.ts');
    const out = await replayCli(['replay', 'export', '--data', data, '--tag', 'imports', '--until', new Date(T0 + 3 * MIN).toISOString(), '--out', join(dir, 'never')]);
    expect(out.code).not.toBe(0);
    expect(out.err).toContain(
      `agent.ruleFiles[0]: rule file rules/outside.ts imports ../shared.ts, outside the rule file's folder: only the files under that folder travel with it into a replay fixture; expected every file it imports under its folder (move ../shared.ts there); the fixture would not run what the site ran`,
    );
    writeFileSync(join(data, 'rules', 'package-user.ts'), `import pkg from 'some-package';\nimport { pick } from './lib/pick.ts';\nexport default [pkg, pick];\n`);
    withRule('rules/package-user.ts');
    const told = await replayCli(['replay', 'export', '--data', data, '--tag', 'imports', '--until', new Date(T0 + 3 * MIN).toISOString(), '--out', join(dir, 'with-package')]);
    expect(told.code, told.err).toBe(0);
    expect(told.err).toContain(
      "replay export: the site's rule file rules/package-user.ts imports package some-package, which the fixture does not hold (only the files under the rule file's folder travel, in config/rules/0/); a replay with --run-rule-files loads it where it runs (node_modules above the fixture) or refuses the file naming it",
    );
    withRule('rules/pick-watch.ts');
  }, 120_000);
});

describe('replay diff of two runs whose rule file is the same and whose helper is not', () => {
  it('lists the rule as changed, naming the helper on each side', async () => {
    const own = join(dir, 'own');
    mkdirSync(join(own, 'lib'), { recursive: true });
    writeFileSync(join(own, 'package.json'), '{ "type": "module" }\n');
    writeFileSync(join(own, 'pick-watch.ts'), RULE);
    writeFileSync(join(own, 'lib', 'pick.ts'), PICK);
    // The fixture's live rule file (package-user.ts) is left out: this compares two config files' code.
    writeFileSync(join(dir, 'agent.json'), JSON.stringify({ label: 'pick', base: 'installed', ruleFiles: ['own/pick-watch.ts'] }));
    const agent = join(dir, 'agent.json');
    const fx = join(dir, 'with-package'); // exported above: the same period
    const runs: string[] = [];
    for (const count of [2, 4]) {
      writeFileSync(join(own, 'lib', 'n.ts'), n(count));
      const out = join(dir, `run-n${count}`);
      const r = await replayCli(['replay', 'run', '--fixture', fx, '--agent', agent, '--out', out]);
      expect(r.code, r.err).toBe(0);
      runs.push(out);
    }
    const d = await replayCli(['replay', 'diff', runs[0]!, runs[1]!, '--out', join(dir, 'diff')]);
    expect(d.code, d.err).toBe(0);
    const report = JSON.parse(read('diff', 'report.json')) as DiffReport;
    expect(report.agentChanges.rules.map((r) => [r.id, r.baseline, r.candidate, r.baselineFile?.path, r.candidateFile?.path])).toEqual([['pick-watch', '1', '1', 'own/pick-watch.ts', 'own/pick-watch.ts']]);
    const [change] = report.agentChanges.rules;
    expect(change!.baselineFile!.sha256).not.toBe(change!.candidateFile!.sha256);
    expect(change!.baselineFile!.imports!.find((i) => i.path === 'lib/n.ts')!.sha256).toBe(sha(n(2)));
    expect(change!.candidateFile!.imports!.find((i) => i.path === 'lib/n.ts')!.sha256).toBe(sha(n(4)));
    expect(report.perRule['pick-watch']!.added).toBe(2);
    expect(read('diff', 'report.md')).toContain(`with 2 files it imports); imported files that differ: lib/n.ts ${sha(n(2)).slice(0, 12)}… → ${sha(n(4)).slice(0, 12)}…`);
  }, 120_000);
});
