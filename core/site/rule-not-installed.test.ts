// A rule file taken out of config.json `agent.ruleFiles`: its rule's open proposals were skipped
// by every run and stayed open in the floor's inbox for good (their run tags renewed, an approval
// only "stale: rule … is not installed any more"). The site's agent now withdraws them at its
// first run after the restart that leaves the file out, saying why in en/nb/de. Not before: a
// reload keeps the rules loaded at start running. Not when the file fails to load (a syntax error
// after an edit): the start is refused, as is `tilstand agent run`, and the proposals stay. A new
// version of the rule (same id) is the rule installed. A replay that runs a subset of the rules
// withdraws nothing of the others (core/replay makes its Agent without withdrawNotInstalled).
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { APPROVAL_INBOX_TABLE, readProposals } from '../inbox/index.ts';
import { Catalog } from '../lsm/index.ts';
import { openAgentSpec } from '../replay/agent-spec.ts';
import { DemoEvents } from '../replay/demo-events.ts';
import { exportFixture } from '../replay/export.ts';
import { runReplay } from '../replay/replay.ts';
import { LiveSite, T0 } from '../replay/test-support.ts';
import type { ProposalView } from './api.ts';
import { runMain } from './cli/test-support.ts';
import { initDataDir } from './init.ts';
import { DEMO_ADMIN, Site } from './site.ts';
import { session } from './test-support/session.ts';

const FAST = { N: 1024, r: 8, p: 1 };
const RULE_PATH = 'rules/note-watch.mts';

/** A rule of the site's own: one notice, always (it cites no rows). */
const noteWatch = (version: string) => `const noteWatch = {
  id: 'note-watch',
  version: '${version}',
  description: 'One notice, always.',
  messages: {
    'note-watch.explanation': { en: 'A notice.', nb: 'Et varsel.', de: 'Ein Hinweis.' },
    'note-watch.risk': { en: 'a notice', nb: 'et varsel', de: 'ein Hinweis' },
  },
  evaluate() {
    return [{ action: 'note', module: null, params: { n: 'one' }, keyParams: ['n'], risk: 'low', riskReason: { id: 'note-watch.risk', params: {} }, explanation: { id: 'note-watch.explanation', params: {} }, evidence: [] }];
  },
  recheck: () => ({ holds: true }),
  effectSeen: () => false,
};
export default noteWatch;
`;

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-rule-not-installed-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('a rule file taken out of agent.ruleFiles', () => {
  it('its open proposals stay through a failed load and a new version, and are withdrawn by the first run after the restart that leaves it out', async () => {
    const data = join(dir, 'site');
    await initDataDir({ data, site: 'rni', scrypt: FAST, admin: DEMO_ADMIN, config: (c) => ({ ...c, agent: { ...c.agent, ruleFiles: [RULE_PATH] } }) });
    mkdirSync(join(data, 'rules'));
    const file = join(data, RULE_PATH);
    writeFileSync(file, noteWatch('1'));
    const lines: string[] = [];
    const start = () => Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false, log: (l) => void lines.push(l) });
    const status = (s: Site, id: string) => s.decisions!.inbox.get(id)?.status;

    let site = await start();
    let id: string;
    try {
      const created = site.runAgent().created.filter((p) => p.ruleId === 'note-watch');
      expect(created.length).toBe(1);
      id = created[0]!.id;
    } finally {
      await site.stop();
    }

    // A syntax error after an edit: the rule is meant to run; the start is refused, and so is an
    // offline run, so nothing withdraws its proposal.
    writeFileSync(file, `${noteWatch('1')}\nconst broken = ;\n`);
    await expect(start()).rejects.toThrow(/^config agent\.ruleFiles\[0\]: rule file rules\/note-watch\.mts: /);
    const offline = await runMain(['agent', 'run', '--data', data]);
    expect(offline.code).toBe(2);
    const stillOpen = await runMain(['proposals', '--data', data, '--status', 'open', '--json']);
    expect((JSON.parse(stillOpen.out) as { id: string }[]).map((p) => p.id)).toContain(id);

    // Mended as a new version: the same rule.
    writeFileSync(file, noteWatch('2'));
    site = await start();
    try {
      expect(site.runAgent().withdrawn).toEqual([]);
      expect(status(site, id)).toBe('open');
      // Taken out of config.json: a reload keeps the rules loaded at start running.
      const configPath = join(data, 'config.json');
      const c = JSON.parse(readFileSync(configPath, 'utf8')) as { agent: Record<string, unknown> };
      writeFileSync(configPath, JSON.stringify({ ...c, agent: { ...c.agent, ruleFiles: [] } }));
      expect(await site.reloadConfig()).toEqual({ applied: [], restartNeeded: ['agent.ruleFiles'] });
      expect(site.runAgent().withdrawn).toEqual([]);
      expect(status(site, id)).toBe('open');
    } finally {
      await site.stop();
    }

    // The restart: the rule no longer runs, and its proposal is withdrawn, saying why.
    site = await start();
    try {
      const run = site.runAgent();
      expect(run.withdrawn.map((p) => p.id)).toEqual([id]);
      expect(status(site, id)).toBe('withdrawn');
      expect(lines).toContain(`agent: run ${run.runId} withdrew 1 open proposal of rule note-watch, which is not installed any more (not among the rules this site runs)`);
      const s = session();
      await site.service.call('signIn', { user: DEMO_ADMIN.name, secret: DEMO_ADMIN.pin }, s);
      const withdrawn = ((await site.service.call('listProposals', { status: ['withdrawn'] }, s)) as ProposalView[]).find((p) => p.id === id)!;
      expect(withdrawn.withdrawnReason).toBe(`rule note-watch is not installed any more (run ${run.runId})`);
      expect(withdrawn.translations).toMatchObject({
        nb: { withdrawnReason: `regel note-watch er ikke installert lenger (kjøring ${run.runId})` },
        de: { withdrawnReason: `Regel note-watch ist nicht mehr installiert (Lauf ${run.runId})` },
      });
      expect(site.runAgent().withdrawn).toEqual([]);
    } finally {
      await site.stop();
    }

    // Named again, it proposes anew; taken out again, an offline `tilstand agent run` (no site
    // running) withdraws it as the site's agent does.
    const configPath = join(data, 'config.json');
    const c = JSON.parse(readFileSync(configPath, 'utf8')) as { agent: Record<string, unknown> };
    writeFileSync(configPath, JSON.stringify({ ...c, agent: { ...c.agent, ruleFiles: [RULE_PATH] } }));
    site = await start();
    let again: string;
    try {
      again = site.runAgent().created.find((p) => p.ruleId === 'note-watch')!.id;
    } finally {
      await site.stop();
    }
    writeFileSync(configPath, JSON.stringify({ ...c, agent: { ...c.agent, ruleFiles: [] } }));
    const run = await runMain(['agent', 'run', '--data', data]);
    expect(run.code, run.err).toBe(0);
    expect(run.out).toMatch(/^agent run \S+: 0 new, 0 already open, 0 recently decided, 1 withdrawn$/m);
    const gone = await runMain(['proposals', '--data', data, '--status', 'withdrawn', '--json']);
    expect((JSON.parse(gone.out) as { id: string; withdrawnReason: string }[]).find((p) => p.id === again)?.withdrawnReason).toMatch(/^rule note-watch is not installed any more \(run \S+\)$/);
  }, 120_000);
});

describe('a replay that runs a subset of the rules', () => {
  it('leaves the open proposals of the rules it does not run as they were at the cut', async () => {
    const live = new LiveSite({ parent: dir });
    const gen = new DemoEvents({ site: live.site, seed: 11 });
    live.receive(gen.initial(T0 + 100));
    for (let i = 0; i < 60; i++) live.receive(gen.step(T0 + 1000 + i * 2000));
    await live.advance(T0 + 3 * 60_000);
    live.close();
    const fixture = join(dir, 'subset-fixture');
    await exportFixture({ data: live.dir, tag: 'subset', untilMs: T0 + 5 * 60_000, atMs: T0 + 3 * 60_000, out: fixture });
    const openAtCut = readProposals(new Catalog(join(fixture, 'warehouse')).getTable({ database: live.database, table: APPROVAL_INBOX_TABLE }), { status: ['open', 'deferred'], limit: 10_000 });
    const others = openAtCut.filter((p) => p.ruleId !== 'idle-resource');
    expect(others.length).toBeGreaterThan(0);
    const rules = join(dir, 'idle-only.json');
    writeFileSync(rules, JSON.stringify({ label: 'idle-only', rules: ['idle-resource'] }));
    let scratch = '';
    await runReplay({ fixture, out: join(dir, 'subset-run'), agent: await openAgentSpec(rules), keepScratch: true, onScratch: (d) => void (scratch = d) });
    try {
      const after = readProposals(new Catalog(join(scratch, 'warehouse')).getTable({ database: live.database, table: APPROVAL_INBOX_TABLE }), { limit: 10_000 });
      const byId = new Map(after.map((p) => [p.id, p]));
      for (const p of others) expect([p.id, byId.get(p.id)?.status]).toEqual([p.id, p.status]);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }, 120_000);
});
