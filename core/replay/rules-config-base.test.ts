// A rules config's `base`: a candidate is the live agent with its changes. On a fixture from a site
// that ran a rule file of its own, a config that only changes a threshold keeps that rule (base
// "live", the default), so the diff against `--agent default` shows none of its proposals as
// removed; "base": "installed" leaves it out, and the report says the bases differ. The live file
// is code that came with the fixture: such a config runs only with --run-rule-files (exit 2
// naming the files without it). A config's rule file rule with the live rule's id is a new version
// of it, refused under the live version; `rules` may name a rule only the live file has. On a
// fixture without live rule files the base changes nothing.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_RULES } from '../agents/index.ts';
import { DemoEvents } from './demo-events.ts';
import type { DiffReport } from './diff.ts';
import { exportFixture, makeCut } from './export.ts';
import type { ReplayProposal } from './fixture.ts';
import { defaultScratchParent, type RunManifest } from './replay.ts';
import { LiveSite, replayCli, T0 } from './test-support.ts';

const MIN = 60_000;
const LIVE_PATH = 'rules/queue-note.mjs';

/** The live site's rule: a notice for the first `n` jobs of the work queue by id (`version` its version). */
const queueNote = (version: string, n = 3) => `export default {
  id: 'queue-note',
  version: '${version}',
  description: 'A notice for the first jobs of the queue.',
  messages: { 'queue-note.note': { en: 'Job {job} is queued.', nb: 'Jobb {job} står i kø.', de: 'Auftrag {job} wartet.' }, 'queue-note.risk': { en: 'a notice', nb: 'et varsel', de: 'ein Hinweis' }, 'queue-note.gone': { en: 'gone', nb: 'borte', de: 'weg' } },
  evaluate(ctx) {
    return [...ctx.tables.work_queue.scan()].sort((a, b) => (String(a.job_id) < String(b.job_id) ? -1 : 1)).slice(0, ${n}).map((r) => ({
      action: 'note_job', module: null, params: { job: String(r.job_id) }, keyParams: ['job'], risk: 'low',
      riskReason: { id: 'queue-note.risk', params: {} }, explanation: { id: 'queue-note.note', params: { job: String(r.job_id) } },
      evidence: [{ table: 'work_queue', rows: [r] }],
    }));
  },
  recheck(ctx, p) {
    return ctx.tables.work_queue.get({ job_id: p.params.job }) ? { holds: true } : { holds: false, reason: { id: 'queue-note.gone', params: {} } };
  },
  effectSeen: () => false,
};
`;

const THRESHOLD = { defaultReorder: { reorderPoint: 15, orderUpTo: 40 } };

let dir: string;
/** A fixture whose site ran rules/queue-note.mjs, and one of the same period without it. */
let fixture: string;
let plain: string;

beforeAll(async () => {
  dir = mkdtempSync(join(defaultScratchParent(), 'tilstand-replay-base-'));
  const site = new LiveSite({ parent: dir });
  const data = site.dir;
  const gen = new DemoEvents({ site: site.site, seed: 11 });
  site.receive(gen.initial(T0 + 100));
  for (let i = 0; i < 60; i++) site.receive(gen.step(T0 + 1000 + i * 2000));
  await site.advance(T0 + 90_000);
  makeCut(site.catalog, site.database, 'replay-base', { clock: site.clock });
  await site.advance(T0 + 3 * MIN);
  site.close();
  plain = join(dir, 'plain');
  await exportFixture({ data, tag: 'base', untilMs: T0 + 3 * MIN, atMs: T0 + 90_000, out: plain });
  // The site's rule file, named in its config.json (the live agent here ran the installed rules:
  // what is tested is what the fixture carries and what a replay composes from it).
  mkdirSync(join(data, 'rules'));
  writeFileSync(join(data, LIVE_PATH), queueNote('1'));
  const config = JSON.parse(readFileSync(join(data, 'config.json'), 'utf8')) as Record<string, Record<string, unknown>>;
  writeFileSync(join(data, 'config.json'), JSON.stringify({ ...config, agent: { ...config.agent, ruleFiles: [LIVE_PATH] } }));
  fixture = join(dir, 'fixture');
  await exportFixture({ data, tag: 'base', untilMs: T0 + 3 * MIN, atMs: T0 + 90_000, out: fixture });
  const run = await replayCli(['replay', 'run', '--fixture', fixture, '--out', join(dir, 'run-default'), '--run-rule-files']);
  if (run.code !== 0) throw new Error(run.err);
}, 180_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const read = (run: string, f: string) => readFileSync(join(dir, run, f), 'utf8');
const proposals = (run: string) => JSON.parse(read(run, 'proposals.json')) as ReplayProposal[];
const manifest = (run: string) => JSON.parse(read(run, 'run.json')) as RunManifest;
const report = (out: string) => JSON.parse(read(out, 'report.json')) as DiffReport;

/** A rules config in the test folder. */
function config(name: string, o: Record<string, unknown>): string {
  const path = join(dir, `${name}.json`);
  writeFileSync(path, JSON.stringify(o));
  return path;
}

const run = (agent: string, out: string, ...more: string[]) => replayCli(['replay', 'run', '--fixture', fixture, '--agent', agent, '--out', join(dir, out), ...more]);
const diff = (a: string, b: string, out: string) => replayCli(['replay', 'diff', join(dir, a), join(dir, b), '--out', join(dir, out)]);

describe('a rules config on a fixture whose site ran a rule file of its own', () => {
  it('a threshold-only candidate keeps the live rule (base "live", the default): the diff removes none of its proposals', async () => {
    const noted = proposals('run-default').filter((p) => p.ruleId === 'queue-note');
    expect(noted.length).toBeGreaterThan(0);
    const r = await run(config('reorder-15', { label: 'reorder-15', config: THRESHOLD }), 'run-reorder', '--run-rule-files');
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain(`replay: running the live site's rule file ${LIVE_PATH}`);
    // The same proposals; their ids count the run's others, which the threshold changes.
    const noId = (ps: ReplayProposal[]) => ps.map(({ id: _id, ...p }) => p);
    expect(noId(proposals('run-reorder').filter((p) => p.ruleId === 'queue-note'))).toEqual(noId(noted));
    const m = manifest('run-reorder');
    expect(m.agent.base).toBe('live');
    expect(m.agent.rules.map((r) => r.id)).toEqual([...DEFAULT_RULES.map((r) => r.id), 'queue-note']);
    expect(m.agent.rules.at(-1)).toEqual({ id: 'queue-note', version: '1', file: { path: LIVE_PATH, sha256: expect.any(String) } });
    expect(m.agent.liveRuleFiles).toEqual([{ path: LIVE_PATH, sha256: m.agent.rules.at(-1)!.file!.sha256 }]);
    expect(manifest('run-default').agent.base).toBe('live');

    const d = await diff('run-default', 'run-reorder', 'diff-reorder');
    expect(d.code, d.err).toBe(0);
    const rep = report('diff-reorder');
    expect(rep.agentChanges.rules).toEqual([]);
    expect(rep.agentChanges.base).toBeUndefined();
    expect(rep.agentChanges.config.map((c) => c.key)).toEqual(['defaultReorder']);
    expect(rep.perRule['queue-note']).toMatchObject({ added: 0, removed: 0, changed: 0 });
  }, 120_000);

  it('"base": "installed" leaves the live rule out, and the report says the bases differ', async () => {
    const r = await run(config('installed', { label: 'installed', base: 'installed', config: THRESHOLD }), 'run-installed');
    expect(r.code, r.err).toBe(0); // no --run-rule-files needed: the fixture's code does not run
    expect(r.err).not.toContain("running the live site's rule file");
    expect(proposals('run-installed').filter((p) => p.ruleId === 'queue-note')).toEqual([]);
    const m = manifest('run-installed');
    expect(m.agent.base).toBe('installed');
    expect(m.agent.rules.map((r) => r.id)).toEqual(DEFAULT_RULES.map((r) => r.id));
    expect(m.agent).not.toHaveProperty('liveRuleFiles');
    expect(m.agent).not.toHaveProperty('ruleFiles');

    const d = await diff('run-default', 'run-installed', 'diff-installed');
    expect(d.code, d.err).toBe(0);
    const rep = report('diff-installed');
    expect(rep.agentChanges.base).toEqual({ baseline: 'live', candidate: 'installed' });
    expect(rep.perRule['queue-note']!.removed).toBe(proposals('run-default').filter((p) => p.ruleId === 'queue-note').length);
    expect(read('diff-installed', 'report.md')).toContain('- base: live (the rules the live site ran) → installed (the installed rules only)');
    // The live rule and the base, both said: the rule is not run because of the base.
    expect(rep.agentChanges.rules.map((x) => [x.id, x.baseline, x.candidate])).toEqual([['queue-note', '1', null]]);
  }, 120_000);

  it('without --run-rule-files a candidate on base "live" is refused (exit 2), naming the files and "base": "installed"', async () => {
    for (const o of [{ config: THRESHOLD }, { base: 'live', config: THRESHOLD }]) {
      const agent = config('refused', o);
      const r = await run(agent, 'run-refused');
      expect([r.code, r.err]).toEqual([
        2,
        expect.stringContaining(
          `the fixture holds the live site's rule files, code its agent ran (${LIVE_PATH}, sha256 ${manifest('run-default').agent.liveRuleFiles![0]!.sha256.slice(0, 12)}…): ${agent} starts from the rules the live site ran ("base": "live", the default), and a replay runs them only when told; give --run-rule-files to run them with its changes (read them first: config/rules/ in the fixture), or "base": "installed" in ${agent} to leave them out`,
        ),
      ]);
      expect(existsSync(join(dir, 'run-refused'))).toBe(false);
    }
  }, 120_000);

  it('a config file’s rule with the live rule’s id is a new version of it: refused under the live version, run in its place under its own', async () => {
    writeFileSync(join(dir, 'same.mjs'), queueNote('1', 1));
    const same = config('same', { ruleFiles: ['./same.mjs'] });
    const r = await run(same, 'run-same', '--run-rule-files');
    expect([r.code, r.err]).toEqual([
      2,
      expect.stringContaining(`tilstand: --agent ${same}: rule file ./same.mjs: rule queue-note has the version 1 of the live site's rule file ${LIVE_PATH}; a new version of a live rule needs a version of its own (expected another than 1), or "base": "installed" to run the config's rules without the live site's rule files\n`),
    ]);
    expect(existsSync(join(dir, 'run-same'))).toBe(false);

    writeFileSync(join(dir, 'one.mjs'), queueNote('2', 1));
    const one = await run(config('one', { ruleFiles: ['./one.mjs'] }), 'run-one', '--run-rule-files');
    expect(one.code, one.err).toBe(0);
    const m = manifest('run-one');
    expect(m.agent.rules.map((x) => x.id)).toEqual([...DEFAULT_RULES.map((x) => x.id), 'queue-note']);
    expect(m.agent.rules.at(-1)).toMatchObject({ id: 'queue-note', version: '2', file: { path: './one.mjs' } });
    expect(m.agent.ruleFiles!.map((f) => f.path)).toEqual([LIVE_PATH, './one.mjs']);
    expect(m.agent.liveRuleFiles!.map((f) => f.path)).toEqual([LIVE_PATH]);
    expect(new Set(proposals('run-one').filter((p) => p.ruleId === 'queue-note').map((p) => p.params.job)).size).toBe(1);
  }, 120_000);

  it('`rules` picks from the composed set: a rule only the live file has can be named; one nobody has is refused once the fixture is opened', async () => {
    const r = await run(config('only-live', { rules: [{ id: 'queue-note', version: '1' }] }), 'run-only-live', '--run-rule-files');
    expect(r.code, r.err).toBe(0);
    expect(manifest('run-only-live').agent.rules).toEqual([manifest('run-default').agent.rules.at(-1)]);
    expect(proposals('run-only-live').map((p) => p.ruleId)).toEqual(proposals('run-default').filter((p) => p.ruleId === 'queue-note').map((p) => p.ruleId));

    const none = config('none', { rules: ['no-such-rule'] });
    const refused = await run(none, 'run-none', '--run-rule-files');
    expect([refused.code, refused.err]).toEqual([2, expect.stringContaining(`tilstand: --agent ${none}: agent rules config rules[0]: unknown rule "no-such-rule" (installed or from the live site's rule files: `)]);
    expect(refused.err).toContain(`queue-note@1 (the live site's rule file ${LIVE_PATH})`);
    // The version the live file has, not another.
    const wrong = config('wrong-version', { rules: [{ id: 'queue-note', version: '7' }] });
    const w = await run(wrong, 'run-wrong', '--run-rule-files');
    expect([w.code, w.err]).toEqual([2, expect.stringContaining(`tilstand: --agent ${wrong}: agent rules config rules[0]: queue-note is at version 1 in the live site's rule file ${LIVE_PATH}, not "7"\n`)]);
  }, 120_000);

  it('replay diff reads a run.json from before `base` (none recorded): said as not recorded', async () => {
    const old = join(dir, 'run-old');
    cpSync(join(dir, 'run-installed'), old, { recursive: true });
    const m = manifest('run-old');
    delete m.agent.base;
    writeFileSync(join(old, 'run.json'), JSON.stringify(m));
    const d = await diff('run-old', 'run-reorder', 'diff-old');
    expect(d.code, d.err).toBe(0);
    expect(report('diff-old').agentChanges.base).toEqual({ baseline: null, candidate: 'live' });
    expect(read('diff-old', 'report.md')).toContain('- base: not recorded → live (the rules the live site ran)');
  }, 120_000);
});

describe('a rules config on a fixture without live rule files', () => {
  it('runs the same rules whatever its base, and records no base', async () => {
    const runs: string[] = [];
    for (const base of [undefined, 'live', 'installed']) {
      const out = `plain-${base ?? 'unset'}`;
      const r = await replayCli(['replay', 'run', '--fixture', plain, '--agent', config(`plain-${base ?? 'unset'}`, { label: 'reorder-15', ...(base ? { base } : {}), config: THRESHOLD }), '--out', join(dir, out)]);
      expect(r.code, r.err).toBe(0);
      runs.push(out);
    }
    for (const out of runs) {
      expect(Object.keys(manifest(out).agent).sort()).toEqual(['config', 'label', 'rules', 'source']);
      expect(manifest(out).agent.rules).toEqual(DEFAULT_RULES.map((r) => ({ id: r.id, version: r.version })));
      expect(read(out, 'proposals.json')).toBe(read(runs[0]!, 'proposals.json'));
    }
    // A rule nobody has: refused as before (exit 2, the installed rules named), nothing written.
    const none = config('plain-none', { rules: ['no-such-rule'], base: 'live' });
    const r = await replayCli(['replay', 'run', '--fixture', plain, '--agent', none, '--out', join(dir, 'plain-none')]);
    expect([r.code, r.err]).toEqual([2, `tilstand: --agent ${none}: agent rules config rules[0]: unknown rule "no-such-rule" (installed: ${DEFAULT_RULES.map((x) => `${x.id}@${x.version}`).join(', ')})\n`]);
    expect(existsSync(join(dir, 'plain-none'))).toBe(false);
  }, 180_000);
});
