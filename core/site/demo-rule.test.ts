// A new demo directory runs a rule of a site's own: `tilstand start --demo` (Site.start with demo,
// through init.ts) writes docs/examples/rules/door-down.mts to <data>/rules/door-down.mts and
// names it in config.json agent.ruleFiles; the running site loads it from there (its type-only
// import, whose path does not exist in the data directory, is dropped), `tilstand status` counts
// it and names its file, and a door the yard system reports down becomes a door-down notice. A
// directory that exists is not changed; a site that is not a demo gets no rule. The text's one
// source is the example in docs/; where docs/ is not (the packaged app), the copy the build puts
// beside the site's bundle (scripts/build-site.mjs).

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_RULES } from '../agents/index.ts';
import type { ProposalView } from './api.ts';
import { runMain } from './cli/test-support.ts';
import { readConfig, writeConfig } from './config.ts';
import { readModuleSecrets } from './demo/run.ts';
import { DEMO_YARD_TABLE, demoConfig } from './demo/site.ts';
import { DEMO_RULE_FILE, DEMO_RULE_SOURCES, initDataDir, readDemoRule } from './init.ts';
import { DEMO_ADMIN, Site } from './site.ts';
import { session } from './test-support/session.ts';

const ROOT = resolve(import.meta.dirname, '..', '..');
const EXAMPLE = join(ROOT, 'docs', 'examples', 'rules', 'door-down.mts');
const SINCE = '2026-12-06T07:15:00.000';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-demo-rule-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The rows of yard_doors (by column name) once `ok` holds of them after a commit (bounded: 400 tries, 20 s). */
async function doorsOnce(site: Site, ok: (rows: Record<string, unknown>[]) => boolean): Promise<Record<string, unknown>[]> {
  const deadline = Date.now() + 20_000;
  let rows: Record<string, unknown>[] = [];
  for (let i = 0; i < 400 && Date.now() < deadline; i++) {
    site.ingestor.commitAll();
    const t = site.catalog.getTable({ database: 'site_demo', table: DEMO_YARD_TABLE });
    const names = t.schema.fields.map((f) => f.name);
    rows = t.latestSnapshot() ? t.scanRows().map((r) => Object.fromEntries(names.map((n, j) => [n, r[j]]))) : [];
    if (ok(rows)) return rows;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${DEMO_YARD_TABLE} did not come to the rows expected; it holds ${JSON.stringify(rows, (_k, v) => (typeof v === 'bigint' ? String(v) : v))}`);
}

describe('a new demo directory runs docs/examples/rules/door-down.mts from <data>/rules/', () => {
  let data: string;
  let site: Site | undefined;
  afterAll(async () => {
    await site?.stop();
  });

  it('start --demo writes the example into the directory and names it in config.json; the site runs it and status says so', async () => {
    data = join(dir, 'demo');
    // The modules step once in 10 min: the yard system sends its doors once, as it starts.
    site = await Site.start({ data, demo: true, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false, demoStepMs: 600_000 });
    expect(readFileSync(join(data, DEMO_RULE_FILE), 'utf8')).toBe(readFileSync(EXAMPLE, 'utf8'));
    expect(readConfig(data).agent.ruleFiles).toEqual([DEMO_RULE_FILE]);

    const own = { id: 'door-down', version: '3', file: { path: DEMO_RULE_FILE, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) } };
    expect(site.status().agentRules).toEqual([...DEFAULT_RULES.map((r) => ({ id: r.id, version: r.version })), own]);
    const status = await runMain(['status', '--data', data]);
    expect(status.code, status.err).toBe(0);
    const lines = status.out.split('\n');
    expect(lines).toContain(`agent: ${DEFAULT_RULES.length + 1} rules, 1 from rule files of this site's own (config agent.ruleFiles)`);
    expect(lines.filter((l) => l.startsWith('  rule '))).toEqual([expect.stringMatching(/^ {2}rule door-down@3 from rules\/door-down\.mts \(sha256 [0-9a-f]{12}…\)$/)]);
    expect((await runMain(['config', 'check', '--data', data])).code).toBe(0);

    // The yard system's first report: six doors, none down (yard.ts), so no notice yet.
    const rows = await doorsOnce(site, (r) => r.length === 6);
    expect(rows.some((r) => r.state === 'down')).toBe(false);
    expect(site.runAgent().ruleErrors).toEqual([]);
    await site.stop();
    site = undefined;
  }, 90_000);

  it('a door the yard system reports down becomes a door-down notice in the inbox', async () => {
    // The demo's own site without its modules: the next door event is published here, by the yard
    // module's broker user, after the six its module sent.
    site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    const seq = Math.max(...(await doorsOnce(site, (r) => r.length === 6)).map((r) => Number(r.yard_seq))) + 1;
    const password = readModuleSecrets(join(data, 'secrets', 'modules.json')).modules.yard!.password;
    const door = async (state: string, n: number) => {
      const client = await mqtt.connectAsync(site!.mqttUrl, { username: 'yard', password, clientId: 'module-demo-yard', protocolVersion: 4, reconnectPeriod: 0, clean: false });
      try {
        const after = { door_id: 'D-03', state, trailer_id: null, since: SINCE };
        const event = { op: 'u', before: null, after, source: { module: 'yard', stream: 'doors', seq: n }, ts_ms: Date.now(), contract: { name: 'yard.doors', version: 1 } };
        await client.publishAsync('tilstand/demo/events/yard/doors', JSON.stringify(event), { qos: 1 });
      } finally {
        await client.endAsync();
      }
    };
    await door('down', seq);
    await doorsOnce(site, (r) => r.some((x) => x.door_id === 'D-03' && x.state === 'down'));
    expect(site.runAgent().ruleErrors).toEqual([]);
    const s = session();
    await site.service.call('signIn', { user: DEMO_ADMIN.name, secret: DEMO_ADMIN.pin }, s);
    const notices = ((await site.service.call('listProposals', { status: ['open'] }, s)) as ProposalView[]).filter((p) => p.ruleId === 'door-down');
    // The row's time (TIMESTAMP(3): UTC without a zone) as an instant with its zone, as the
    // built-in rules give times: the floor shows it in the PC's own time zone.
    expect(notices.map((p) => [p.action, p.module, p.params, p.explanation])).toEqual([
      ['door_down', null, { door_id: 'D-03', since: `${SINCE}Z` }, `Dock door D-03 has been down since ${SINCE}Z: no trailer can be docked there.`],
    ]);
    // The door is free again: the notice is withdrawn, its state in the reader's words (the stored
    // English keeps the yard system's code, the record).
    await door('free', seq + 1);
    await doorsOnce(site, (r) => r.some((x) => x.door_id === 'D-03' && x.state === 'free'));
    expect(site.runAgent().ruleErrors).toEqual([]);
    const gone = await site.service.call('getProposal', { id: notices[0]!.id }, s);
    expect(gone.status).toBe('withdrawn');
    expect(gone.withdrawnReason).toContain('door D-03 is free now');
    expect(gone.translations?.nb?.withdrawnReason).toContain('port D-03 er ledig nå');
    expect(gone.translations?.de?.withdrawnReason).toContain('Tor D-03 ist jetzt frei');
    await site.stop();
    site = undefined;
  }, 90_000);
});

describe('who gets the demo rule', () => {
  it('a demo directory that exists is not changed: one from before the rule starts with the rules it names', async () => {
    const data = join(dir, 'older-demo');
    const first = await Site.start({ data, demo: true, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false, demoStepMs: 600_000 });
    await first.stop();
    // As a version before this one left a demo directory: no rules/, no agent.ruleFiles.
    rmSync(join(data, 'rules'), { recursive: true, force: true });
    const c = readConfig(data);
    const { ruleFiles: _, ...agent } = c.agent;
    writeConfig(data, { ...c, agent });
    const before = readFileSync(join(data, 'config.json'), 'utf8');
    const again = await Site.start({ data, demo: true, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false, demoStepMs: 600_000 });
    try {
      expect(again.status().agentRules).toEqual(DEFAULT_RULES.map((r) => ({ id: r.id, version: r.version })));
    } finally {
      await again.stop();
    }
    expect(existsSync(join(data, 'rules'))).toBe(false);
    expect(readFileSync(join(data, 'config.json'), 'utf8')).toBe(before);
  }, 90_000);

  it('a site that is not a demo gets none (tilstand init)', async () => {
    const data = join(dir, 'plain');
    const r = await runMain(['init', '--data', data, '--site', 'plain']);
    expect(r.code, r.err).toBe(0);
    expect(existsSync(join(data, 'rules'))).toBe(false);
    expect(readConfig(data).agent.ruleFiles).toBeUndefined();
  }, 30_000);

  it('the demo rule is asked for (demoRule), and refused, writing nothing, where the config lacks the yard_doors it reads', async () => {
    const data = join(dir, 'no-yard');
    await expect(initDataDir({ data, site: 'demo', demoRule: true, scrypt: { N: 1 << 10, r: 8, p: 1 } })).rejects.toThrow(`config tables: the demo's rule file reads ${DEMO_YARD_TABLE}, which the config does not define`);
    expect(existsSync(join(data, 'config.json'))).toBe(false);
    // A demo's config without demoRule (tests that bring their own rules): no rule written.
    const own = join(dir, 'demo-config-own-rules');
    await initDataDir({ data: own, site: 'demo', config: (c) => demoConfig(c), scrypt: { N: 1 << 10, r: 8, p: 1 } });
    expect(existsSync(join(own, 'rules'))).toBe(false);
    expect(readConfig(own).agent.ruleFiles).toBeUndefined();
  }, 30_000);
});

describe('where the demo rule is read from', () => {
  it('the example in docs/ first, then the copy the build puts beside the site bundle; none readable is an error naming both', () => {
    expect(DEMO_RULE_SOURCES).toEqual([EXAMPLE, join(ROOT, 'dist', 'site', 'examples', 'rules', 'door-down.mts')]);
    const docs = join(dir, 'sources', 'docs.mts');
    const copy = join(dir, 'sources', 'copy.mts');
    mkdirSync(join(dir, 'sources'));
    writeFileSync(copy, '// the copy');
    expect(readDemoRule([docs, copy])).toBe('// the copy');
    writeFileSync(docs, '// the example');
    expect(readDemoRule([docs, copy])).toBe('// the example');
    rmSync(docs);
    rmSync(copy);
    expect(() => readDemoRule([docs, copy])).toThrow(`the demo's rule file cannot be read from ${docs} or ${copy} (run \`npm run build\`, which copies it beside the site's bundle)`);
  });
});
