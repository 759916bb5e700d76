// A site runs rules of its own from files (config.json `agent.ruleFiles`, core/agents
// rule-files.ts): `config check` and a start refuse a bad file naming `agent.ruleFiles[<i>]`; a
// site started with one makes that rule's proposals, which the site API shows in nb and de from
// the file's templates; status names the file (path, version, SHA-256); a reload leaves the rules
// that run and says the change takes effect at the next start; and `replay export` carries the
// file into the fixture, whose `--agent default` replay runs it, twice byte-identical, with the
// site's copy of the file gone.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_RULES } from '../agents/index.ts';
import { exportFixture } from '../replay/export.ts';
import type { FixtureManifest, ReplayProposal } from '../replay/fixture.ts';
import { runReplay, type RunManifest } from '../replay/replay.ts';
import type { ProposalView, SiteStatus as ApiStatus } from './api.ts';
import { runMain } from './cli/test-support.ts';
import { parseConfig } from './config.ts';
import { demoConfig } from './demo/site.ts';
import { initDataDir } from './init.ts';
import { DEMO_ADMIN, Site } from './site.ts';
import { formatStatus } from './status.ts';
import { session } from './test-support/session.ts';

const FAST = { N: 1024, r: 8, p: 1 };
const RULE_PATH = 'rules/queue-watch.mts';

/** A rule of the site's own, self-contained: a notice for each of the first three jobs of the queue. */
const QUEUE_WATCH = `// A rule of this site's own (test).
const queueWatch = {
  id: 'queue-watch',
  version: '1',
  description: 'A notice for the first three jobs of the queue.',
  messages: {
    'queue-watch.explanation': { en: 'Job {job} is in the queue.', nb: 'Jobb {job} står i køen.', de: 'Auftrag {job} steht in der Warteschlange.' },
    'queue-watch.risk': { en: 'a notice', nb: 'et varsel', de: 'ein Hinweis' },
    'queue-watch.gone': { en: 'job {job} is gone', nb: 'jobb {job} er borte', de: 'Auftrag {job} ist weg' },
  },
  evaluate(ctx: any) {
    const rows = [...ctx.tables.work_queue.scan()].sort((a: any, b: any) => (String(a.job_id) < String(b.job_id) ? -1 : 1)).slice(0, 3);
    return rows.map((r: any) => ({
      action: 'watch_job',
      module: null,
      params: { job: String(r.job_id) },
      keyParams: ['job'],
      risk: 'low',
      riskReason: { id: 'queue-watch.risk', params: {} },
      explanation: { id: 'queue-watch.explanation', params: { job: String(r.job_id) } },
      evidence: [{ table: 'work_queue', rows: [r] }],
    }));
  },
  recheck(ctx: any, p: any) {
    return ctx.tables.work_queue.get({ job_id: p.params.job }) ? { holds: true } : { holds: false, reason: { id: 'queue-watch.gone', params: { job: p.params.job } } };
  },
  effectSeen: () => false,
};
export default queueWatch;
`;
const SHA = createHash('sha256').update(QUEUE_WATCH).digest('hex');

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-site-rule-files-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('config agent.ruleFiles', () => {
  it('readConfig takes paths only (strings), naming the key of one that is not', () => {
    expect(parseConfig({ site: 's', agent: { ruleFiles: ['rules/a.mts', '/opt/rules/b.mjs'] } }).agent.ruleFiles).toEqual(['rules/a.mts', '/opt/rules/b.mjs']);
    expect(parseConfig({ site: 's' }).agent).not.toHaveProperty('ruleFiles');
    expect(() => parseConfig({ site: 's', agent: { ruleFiles: 'rules/a.mts' } })).toThrow('config agent.ruleFiles: expected an array of paths to rule files (.ts, .mts, .js, .mjs), relative to the data directory or absolute, got "rules/a.mts"');
    expect(() => parseConfig({ site: 's', agent: { ruleFiles: ['rules/a.mts', 3] } })).toThrow('config agent.ruleFiles[1]: expected the path of a rule file (.ts, .mts, .js, .mjs), relative to the data directory or absolute, got 3');
  });
});

describe('a refused rule file', () => {
  it('config check and start refuse it naming agent.ruleFiles[i] and why; nothing is started', async () => {
    const data = join(dir, 'bad');
    await initDataDir({ data, site: 'bad', scrypt: FAST, config: (c) => ({ ...c, agent: { ...c.agent, ruleFiles: [RULE_PATH, 'rules/no-nb.mjs'] } }) });
    mkdirSync(join(data, 'rules'));
    writeFileSync(join(data, RULE_PATH), QUEUE_WATCH);
    writeFileSync(join(data, 'rules', 'no-nb.mjs'), "export default { id: 'no-nb', version: '1', description: 'x', messages: { 'no-nb.note': { en: 'a note', de: 'eine Notiz' } }, evaluate: () => [], recheck: () => ({ holds: true }), effectSeen: () => false };\n");
    const why = 'config agent.ruleFiles[1]: rule file rules/no-nb.mjs: default export: rule no-nb: messages["no-nb.note"]: expected a template in each of en, nb, de; none in nb';
    const r = await runMain(['config', 'check', '--data', data]);
    expect([r.code, r.err]).toEqual([2, `tilstand: ${why}\n`]);
    const lines: string[] = [];
    const e = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false, log: (l) => lines.push(l) }).then(
      async (s) => (await s.stop(), new Error('started')),
      (err: Error) => err,
    );
    expect(e.message).toBe(why);
    expect(lines.at(-1)).toBe(`site bad did not start: ${why}`);
    expect(existsSync(join(data, 'control.sock'))).toBe(false);
    // The file mended, config check says which rules the next start runs from it.
    writeFileSync(join(data, 'rules', 'no-nb.mjs'), "export default { id: 'no-nb', version: '1', description: 'x', messages: { 'no-nb.note': { en: 'a note', nb: 'et notat', de: 'eine Notiz' } }, evaluate: () => [], recheck: () => ({ holds: true }), effectSeen: () => false };\n");
    const ok = await runMain(['config', 'check', '--data', data]);
    expect(ok.code, ok.err).toBe(0);
    expect(ok.out).toContain(`rule file ${RULE_PATH}: queue-watch@1, sha256 ${SHA.slice(0, 12)}… (runs from the next start)\n`);
  }, 30_000);
});

describe('a rule file with imports of its own', () => {
  it('config check refuses one that imports a file outside its folder, naming agent.ruleFiles[i] and the import; one under its folder is taken', async () => {
    const data = join(dir, 'imports');
    await initDataDir({ data, site: 'imports', scrypt: FAST, config: (c) => ({ ...c, agent: { ...c.agent, ruleFiles: ['rules/outside.mjs'] } }) });
    mkdirSync(join(data, 'rules', 'lib'), { recursive: true });
    writeFileSync(join(data, 'shared.mjs'), "export const note = { en: 'a note', nb: 'et notat', de: 'eine Notiz' };\n");
    const rule = (from: string) => `import { note } from '${from}';\nexport default { id: 'with-import', version: '1', description: 'x', messages: { 'with-import.note': note }, evaluate: () => [], recheck: () => ({ holds: true }), effectSeen: () => false };\n`;
    writeFileSync(join(data, 'rules', 'outside.mjs'), rule('../shared.mjs'));
    const r = await runMain(['config', 'check', '--data', data]);
    expect([r.code, r.err]).toEqual([2, "tilstand: config agent.ruleFiles[0]: rule file rules/outside.mjs: imports ../shared.mjs, outside the rule file's folder: only the files under that folder travel with it into a replay fixture; expected every file it imports under its folder (move ../shared.mjs there)\n"]);
    renameSync(join(data, 'shared.mjs'), join(data, 'rules', 'lib', 'shared.mjs'));
    writeFileSync(join(data, 'rules', 'outside.mjs'), rule('./lib/shared.mjs'));
    const ok = await runMain(['config', 'check', '--data', data]);
    expect(ok.code, ok.err).toBe(0);
    // It names what the SHA-256 covers, as tilstand status does.
    expect(ok.out).toMatch(/^rule file rules\/outside\.mjs: with-import@1, sha256 [0-9a-f]{12}…; with lib\/shared\.mjs \(runs from the next start\)$/m);
  });

});

describe('a site with a rule file of its own', () => {
  let data: string;
  let site: Site | undefined;
  let liveWatch: string[] = [];
  let watchIds: string[] = [];

  beforeAll(async () => {
    data = join(dir, 'own');
    await initDataDir({ data, site: 'demo', config: (c) => ({ ...demoConfig(c), agent: { ...demoConfig(c).agent, ruleFiles: [RULE_PATH] } }), admin: DEMO_ADMIN });
    mkdirSync(join(data, 'rules'));
    writeFileSync(join(data, RULE_PATH), QUEUE_WATCH);
    site = await Site.start({ data, demo: true, mqttPort: 0, httpPort: 0, demoStepMs: 600_000, agentTimer: false, ui: false });
    for (let i = 0; i < 200; i++) {
      site.ingestor.commitAll();
      if (site.catalog.getTable({ database: 'site_demo', table: 'work_queue' }).scanRows().length >= 3) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    // The cut before the agent's run (README "Quick start": export --until now, later again).
    await exportFixture({ data, tag: 'own', untilMs: Date.now(), out: join(dir, 'cut') });
    await new Promise((r) => setTimeout(r, 20));
  }, 60_000);

  afterAll(async () => {
    await site?.stop();
  });

  it('makes the rule’s proposals, shown in nb and de through the site API', async () => {
    const run = site!.runAgent();
    expect(run.ruleErrors).toEqual([]);
    const s = session();
    await site!.service.call('signIn', { user: DEMO_ADMIN.name, secret: DEMO_ADMIN.pin }, s);
    const list = (await site!.service.call('listProposals', { status: ['open'] }, s)) as ProposalView[];
    const watched = list.filter((p) => p.ruleId === 'queue-watch');
    expect(watched.length).toBe(3);
    liveWatch = watched.map((p) => p.params.job as string).sort();
    watchIds = watched.map((p) => p.id);
    const p = watched[0]!;
    const job = p.params.job as string;
    expect([p.ruleVersion, p.explanation, p.riskReason]).toEqual(['1', `Job ${job} is in the queue.`, 'a notice']);
    expect(p.translations).toEqual({ nb: { explanation: `Jobb ${job} står i køen.`, riskReason: 'et varsel' }, de: { explanation: `Auftrag ${job} steht in der Warteschlange.`, riskReason: 'ein Hinweis' } });
    const detail = (await site!.service.call('getProposal', { id: p.id }, s)) as ProposalView;
    expect(detail.translations?.de?.explanation).toBe(`Auftrag ${job} steht in der Warteschlange.`);
  });

  it('status says which rules run and which come from a file: path, version, SHA-256', async () => {
    const file = { path: RULE_PATH, sha256: SHA };
    const expected = [...DEFAULT_RULES.map((r) => ({ id: r.id, version: r.version })), { id: 'queue-watch', version: '1', file }];
    expect(site!.status().agentRules).toEqual(expected);
    const s = session();
    await site!.service.call('signIn', { user: DEMO_ADMIN.name, secret: DEMO_ADMIN.pin }, s);
    expect(((await site!.service.call('status', {}, s)) as ApiStatus).agentRules).toEqual(expected);
    const lines = formatStatus(site!.status());
    expect(lines).toContain(`agent: ${expected.length} rules, 1 from rule files of this site's own (config agent.ruleFiles)`);
    expect(lines).toContain(`  rule queue-watch@1 from ${RULE_PATH} (sha256 ${SHA.slice(0, 12)}…)`);
    // A rule file with imports of its own: its SHA-256 covers them, and status names them.
    const imports = [{ path: 'lib/a.ts', sha256: 'a'.repeat(64) }];
    const withImports = formatStatus({ ...site!.status(), agentRules: [{ id: 'with-import', version: '1', file: { path: 'rules/r.ts', sha256: 'f'.repeat(64), imports } }] });
    expect(withImports).toContain(`  rule with-import@1 from rules/r.ts (sha256 ${'f'.repeat(12)}…; with lib/a.ts)`);
  });

  it('a reload leaves the rules that run: a changed agent.ruleFiles takes effect at the next start', async () => {
    const path = join(data, 'config.json');
    const before = readFileSync(path, 'utf8');
    const c = JSON.parse(before) as { agent: Record<string, unknown> };
    try {
      writeFileSync(path, JSON.stringify({ ...c, agent: { ...c.agent, ruleFiles: [] } }));
      expect(await site!.reloadConfig()).toEqual({ applied: [], restartNeeded: ['agent.ruleFiles'] });
      expect(site!.status().agentRules?.at(-1)?.id).toBe('queue-watch');
      expect(site!.config.agent.ruleFiles).toEqual([RULE_PATH]);
      // With a threshold changed as well, the section applies but for its ruleFiles.
      writeFileSync(path, JSON.stringify({ ...c, agent: { ...c.agent, ruleFiles: [], idleMsMin: 1_234_000 } }));
      expect(await site!.reloadConfig()).toEqual({ applied: ['agent'], restartNeeded: ['agent.ruleFiles'] });
      expect(site!.config.agent.ruleFiles).toEqual([RULE_PATH]);
    } finally {
      writeFileSync(path, before);
    }
  });

  it('a reload loads and checks the rule files as the next start would: an edit that would keep it from starting is refused now; a good edit takes effect at the next start', async () => {
    const file = join(data, RULE_PATH);
    const config = join(data, 'config.json');
    const [code, conf] = [readFileSync(file, 'utf8'), readFileSync(config, 'utf8')];
    try {
      await site!.reloadConfig(); // the test before left a threshold applied
      expect(await site!.reloadConfig()).toEqual({ applied: [], restartNeeded: [] });
      // A message without its nb template: the start would refuse the file.
      writeFileSync(file, code.replace("nb: 'et varsel', ", ''));
      await expect(site!.reloadConfig()).rejects.toThrow(/^config agent\.ruleFiles\[0\]: rule file rules\/queue-watch\.mts: /);
      expect(site!.status().agentRules?.at(-1)).toEqual({ id: 'queue-watch', version: '1', file: { path: RULE_PATH, sha256: SHA } });
      // A good edit under the same path: the code that runs is not the file's any more.
      writeFileSync(file, `${code}\n// edited\n`);
      expect(await site!.reloadConfig()).toEqual({ applied: [], restartNeeded: ['agent.ruleFiles'] });
      expect(site!.status().agentRules?.at(-1)?.file?.sha256).toBe(SHA);
      // A file named that is not there.
      writeFileSync(file, code);
      const c = JSON.parse(conf) as { agent: Record<string, unknown> };
      writeFileSync(config, JSON.stringify({ ...c, agent: { ...c.agent, ruleFiles: [RULE_PATH, 'rules/missing.mts'] } }));
      await expect(site!.reloadConfig()).rejects.toThrow(/^config agent\.ruleFiles\[1\]: rule file rules\/missing\.mts: cannot be read/);
      expect(site!.config.agent.ruleFiles).toEqual([RULE_PATH]);
    } finally {
      writeFileSync(file, code);
      writeFileSync(config, conf);
    }
  });

  it('replay export carries the file; --agent default runs it from the fixture, two runs byte-identical', async () => {
    await site!.stop();
    site = undefined;
    const fixture = join(dir, 'fixture');
    await exportFixture({ data, tag: 'own', untilMs: Date.now(), out: fixture });
    const m = JSON.parse(readFileSync(join(fixture, 'fixture.json'), 'utf8')) as FixtureManifest;
    expect(m.liveAgent.ruleFiles).toEqual([{ path: RULE_PATH, sha256: SHA, file: 'config/rules/0/queue-watch.mts' }]);
    expect(readFileSync(join(fixture, 'config', 'rules', '0', 'queue-watch.mts'), 'utf8')).toBe(QUEUE_WATCH);
    expect(m.liveAgent.config).not.toHaveProperty('ruleFiles');
    // The site's copy gone (a fixture moved to HQ): the fixture's runs.
    renameSync(join(data, RULE_PATH), join(data, 'rules', 'moved.mts'));
    // Code that came with the fixture: refused unless told, naming the file, with nothing written.
    const refused = await runMain(['replay', 'run', '--fixture', fixture, '--out', join(dir, 'run-refused')]);
    expect([refused.code, refused.err]).toEqual([2, expect.stringContaining(`the fixture holds the live site's rule files, code its agent ran (${RULE_PATH}, sha256 ${SHA.slice(0, 12)}…): a replay runs them only when told; give --run-rule-files`)]);
    expect(existsSync(join(dir, 'run-refused'))).toBe(false);
    const told = await runMain(['replay', 'run', '--fixture', fixture, '--out', join(dir, 'run-a'), '--run-rule-files']);
    expect(told.code, told.err).toBe(0);
    expect(told.err).toContain(`replay: running the live site's rule file ${RULE_PATH} (sha256 ${SHA.slice(0, 12)}…) from the fixture's config/rules/0/queue-watch.mts`);
    await runReplay({ fixture, out: join(dir, 'run-b'), runFixtureRuleFiles: true });
    const read = (run: string, f: string) => readFileSync(join(dir, run, f), 'utf8');
    for (const f of ['run.json', 'proposals.json', 'agent-runs.json', 'decisions.json']) expect(read('run-b', f), f).toBe(read('run-a', f));
    const replayed = (JSON.parse(read('run-a', 'proposals.json')) as ReplayProposal[]).filter((p) => p.ruleId === 'queue-watch');
    expect(replayed.length).toBe(3);
    expect(replayed.map((p) => p.params.job).sort()).toEqual(liveWatch);
    const run = JSON.parse(read('run-a', 'run.json')) as RunManifest;
    expect(run.agent.label).toBe('default');
    expect(run.agent.rules.at(-1)).toEqual({ id: 'queue-watch', version: '1', file: { path: RULE_PATH, sha256: SHA } });
    expect(run.agent.ruleFiles).toEqual([{ path: RULE_PATH, sha256: SHA, rules: ['queue-watch'] }]);
    renameSync(join(data, 'rules', 'moved.mts'), join(data, RULE_PATH));
  }, 120_000);

  it('with no site running, `tilstand agent run` keeps the rule\'s proposals and `tilstand decide` approves one (not stale: the rule is in force)', async () => {
    expect(site).toBeUndefined(); // stopped by the test before
    const run = await runMain(['agent', 'run', '--data', data]);
    expect(run.code, run.err).toBe(0);
    const open = await runMain(['proposals', '--data', data, '--status', 'open', '--json']);
    expect((JSON.parse(open.out) as Array<{ id: string }>).map((p) => p.id)).toEqual(expect.arrayContaining(watchIds));
    const r = await runMain(['decide', watchIds[0]!, 'approve', '--data', data, '--user', DEMO_ADMIN.name, '--pin', DEMO_ADMIN.pin]);
    expect([r.code, r.out.split('\n')[0]], r.err).toEqual([0, `${watchIds[0]}: approved`]);
  }, 60_000);

  it('`replay export` says which rule file is not the code the site started with (the fixture holds it as it is now)', async () => {
    expect(site).toBeUndefined();
    const same = await runMain(['replay', 'export', '--data', data, '--tag', 'as-loaded', '--until', 'now', '--out', join(dir, 'as-loaded')]);
    expect(same.code, same.err).toBe(0);
    expect(same.err).not.toContain('note: rule file');
    const file = join(data, RULE_PATH);
    try {
      writeFileSync(file, `${QUEUE_WATCH}\n// edited after the start\n`);
      const edited = await runMain(['replay', 'export', '--data', data, '--tag', 'edited', '--until', 'now', '--out', join(dir, 'edited')]);
      expect(edited.code, edited.err).toBe(0);
      const now = createHash('sha256').update(`${QUEUE_WATCH}\n// edited after the start\n`).digest('hex');
      expect(edited.err).toMatch(
        new RegExp(`tilstand: note: rule file rules/queue-watch\\.mts is not the code the site started with at \\S+Z \\(sha256 ${SHA.slice(0, 12)}…; the file now: sha256 ${now.slice(0, 12)}…\\): the fixture holds the file as it is now, while the live proposals of the period came from the code loaded at that start\n`),
      );
    } finally {
      writeFileSync(file, QUEUE_WATCH);
    }
  }, 60_000);
});
