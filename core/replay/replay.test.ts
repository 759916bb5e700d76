// Replay end to end on real files: a live site (Ingestor + Inbox + Agent on a simulated clock, fed
// demo-like events, with people approving and rejecting) is cut with a replay tag, runs on, and is
// exported; the fixture replays to exactly the proposals the live agent made; replays are
// byte-identical; a changed threshold shows in the difference report and the gate's exit code;
// the archive form round-trips through the CLI.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Inbox } from '../inbox/index.ts';
import { Journal } from '../ingest/journal.ts';
import { Table } from '../lsm/index.ts';
import { DemoEvents } from './demo-events.ts';
import { diffRuns, loadRun } from './diff.ts';
import { exportFixture, makeCut } from './export.ts';
import type { FixtureManifest } from './fixture.ts';
import { defaultScratchParent, runReplay, timerRunMs } from './replay.ts';
import { LiveSite, replayCli, T0 } from './test-support.ts';

const MIN = 60_000;
const CUT = T0 + 8 * MIN;
const UNTIL = T0 + 16 * MIN;

let live: LiveSite;
let work: string;
let fixture: string;
let manifest: FixtureManifest;

/** Every 3 minutes (30 s after the agent's minute): approve the oldest open assign-job, reject the oldest reorder/release. */
async function people(g: number, inbox: Inbox): Promise<void> {
  if ((g - T0) % (3 * MIN) !== 30_000) return;
  const open = inbox.openProposals().sort((a, b) => a.createdAtMs - b.createdAtMs || (a.id < b.id ? -1 : 1));
  const yes = open.find((p) => p.ruleId === 'assign-job');
  if (yes) await inbox.decide(yes.id, 'approve', { user: 'lena', pin: '-' });
  const no = open.find((p) => p.ruleId === 'stock-reorder' || p.ruleId === 'release-blocked-job');
  if (no) await inbox.decide(no.id, 'reject', { user: 'lena', pin: '-', comment: 'not this shift' });
}


const read = (dir: string, f: string) => readFileSync(join(dir, f), 'utf8');

beforeAll(async () => {
  work = mkdtempSync(join(defaultScratchParent(), 'tilstand-replay-test-'));
  live = new LiveSite();
  const gen = new DemoEvents({ site: live.site, seed: 7 });
  live.receive(gen.initial(T0 + 100));
  for (let i = 0; i < 640; i++) live.receive(gen.step(T0 + 1000 + i * 1500 + ((i * 7919) % 1000)));
  await live.advance(CUT, { people });
  makeCut(live.catalog, live.database, 'replay-demo', { clock: live.clock }); // the cut, made while the site runs
  await live.advance(UNTIL, { people });
  live.close();
  fixture = join(work, 'fixture');
  manifest = await exportFixture({ data: live.dir, tag: 'demo', untilMs: UNTIL, atMs: CUT, out: fixture });
}, 120_000);

afterAll(() => {
  live?.remove();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('replay', () => {
  it('a fixture exported from a demo-like site replays to the live agent’s proposals, identically', async () => {
    expect(manifest.tag).toBe('replay-demo');
    expect(manifest.tables.work_queue!.snapshotId).not.toBeNull();
    expect(manifest.tables.work_queue!.baselineAgentTag).toBe('agent-20261130-060800-000');
    expect(manifest.events.count).toBeGreaterThan(400); // from the lowest position any table had committed at the cut
    expect(manifest.decisions).toBeGreaterThan(3);
    expect(manifest.liveProposals).toBeGreaterThan(5);
    // The fixture's tables open with Table.open and read at the tag.
    const t = Table.open(join(fixture, 'warehouse', 'site_s1.db', 'work_queue'));
    expect(t.scanRows({ tag: 'replay-demo' }).length).toBeGreaterThan(0);

    const r = await runReplay({ fixture, out: join(work, 'run-a') });
    expect(r.manifest.ingestFailure).toBeNull();
    expect(r.manifest.counts.decisionsUnmatched).toBe(0);
    const liveProposals = JSON.parse(read(fixture, 'live/proposals.json'));
    expect(JSON.parse(read(join(work, 'run-a'), 'proposals.json'))).toEqual(liveProposals);
    const outcomes = JSON.parse(read(join(work, 'run-a'), 'decisions.json')) as { liveOutcome: string; replayOutcome: string }[];
    expect(outcomes.map((o) => o.replayOutcome)).toEqual(outcomes.map((o) => o.liveOutcome));
  }, 60_000);

  it('two replays of the same fixture and agent are byte-identical', async () => {
    await runReplay({ fixture, out: join(work, 'run-b') });
    for (const f of ['run.json', 'proposals.json', 'agent-runs.json', 'decisions.json', 'human-decisions.json']) {
      expect(read(join(work, 'run-b'), f), f).toBe(read(join(work, 'run-a'), f));
    }
  }, 60_000);

  it('a changed threshold shows as added/changed proposals, and the gate sets the exit code', async () => {
    const rules = join(work, 'reorder-12.json');
    writeFileSync(rules, JSON.stringify({ label: 'reorder-12', config: { defaultReorder: { reorderPoint: 12, orderUpTo: 30 } } }));
    const run = await replayCli(['replay', 'run', '--fixture', fixture, '--agent', rules, '--out', join(work, 'run-c')]);
    expect(run.code, run.err).toBe(0);
    const report = diffRuns(loadRun(join(work, 'run-a')), loadRun(join(work, 'run-c')));
    const sr = report.perRule['stock-reorder']!;
    expect(sr.added + sr.changed).toBeGreaterThan(0);
    expect(report.perRule['assign-job']!.added + report.perRule['assign-job']!.removed).toBe(0);
    expect(report.agreement.baseline.judgements).toBe(manifest.decisions);

    const gated = await replayCli(['replay', 'diff', join(work, 'run-a'), join(work, 'run-c'), '--out', join(work, 'diff-1'), '--max-changed', '0']);
    expect(gated.code).toBe(1);
    expect(gated.err).toMatch(/more than --max-changed 0/);
    const ok = await replayCli(['replay', 'diff', join(work, 'run-a'), join(work, 'run-c'), '--out', join(work, 'diff-2'), '--max-changed', '100000', '--min-agreement', '0']);
    expect(ok.code, ok.err).toBe(0);
    const same = await replayCli(['replay', 'diff', join(work, 'run-a'), join(work, 'run-b'), '--out', join(work, 'diff-3'), '--max-changed', '0']);
    expect(same.code, same.err).toBe(0);
    const html = read(join(work, 'diff-2'), 'report.html');
    expect(html).toContain('<svg');
    expect(html).not.toMatch(/<script|https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
    expect(read(join(work, 'diff-2'), 'report.md')).toContain('stock-reorder');
    expect(JSON.parse(read(join(work, 'diff-2'), 'report.json')).summary).toEqual(report.summary);
  }, 60_000);

  it('agreement counts what the run had open when people decided, proposals open since before the cut too', async () => {
    // People rejected reorders the live agent made at 06:01, before the cut, still open in the
    // period: the replay had them open and rejected them again. The live agent disagrees with
    // those rejections (it scores below 1, README), though proposals.json lists only what the
    // run made after the cut.
    const outcomes = JSON.parse(read(join(work, 'run-a'), 'decisions.json')) as { verb: string; replayOutcome: string; liveProposalId: string }[];
    const early = outcomes.filter((o) => o.verb === 'reject' && o.replayOutcome === 'rejected' && o.liveProposalId < 'P-20261130-0608');
    expect(early.length).toBeGreaterThan(0);
    const a = diffRuns(loadRun(join(work, 'run-a')), loadRun(join(work, 'run-b'))).agreement.baseline;
    expect(a.judgements).toBe(outcomes.filter((o) => o.verb !== 'defer').length);
    expect(a.rejectedProposed).toBe(outcomes.filter((o) => o.verb === 'reject' && o.replayOutcome !== 'unmatched').length);
    expect(a.approvedProposed).toBe(outcomes.filter((o) => o.verb === 'approve' && o.replayOutcome !== 'unmatched').length);
    expect(a.agreement).toBeLessThan(1);
    expect(a.disagreements.some((d) => d.verb === 'reject' && d.runHadItOpen)).toBe(true);
  }, 60_000);

  it('the archive form round-trips through the CLI', async () => {
    const tar = join(work, 'demo.tar');
    const ex = await replayCli(['replay', 'export', '--data', live.dir, '--tag', 'replay-demo', '--at', new Date(CUT).toISOString(), '--until', new Date(UNTIL).toISOString(), '--out', tar]);
    expect(ex.code, ex.err).toBe(0);
    expect(existsSync(tar)).toBe(true);
    const run = await replayCli(['replay', 'run', '--fixture', tar, '--out', join(work, 'run-tar')]);
    expect(run.code, run.err).toBe(0);
    expect(read(join(work, 'run-tar'), 'proposals.json')).toBe(read(join(work, 'run-a'), 'proposals.json'));
    // A damaged archive is refused by its checksums.
    const bytes = readFileSync(tar);
    const i = bytes.indexOf('"decisions"');
    expect(i).toBeGreaterThan(0);
    const bad = join(work, 'bad.tar');
    const copy = Buffer.from(bytes);
    const j = copy.indexOf('lena');
    copy.write('LENA', j);
    writeFileSync(bad, copy);
    const refused = await replayCli(['replay', 'run', '--fixture', bad, '--out', join(work, 'run-bad')]);
    expect(refused.code).not.toBe(0);
    expect(refused.err).toMatch(/checksum/);
  }, 60_000);

  it('export: --until now ends the period at the export; a future or too-early end is refused before anything is tagged', async () => {
    const tags = () => Table.open(join(live.dir, 'warehouse', 'site_s1.db', 'stock')).listTags().map((t) => t.name);
    const future = await replayCli(['replay', 'export', '--data', live.dir, '--tag', 'later', '--until', new Date(Date.now() + 3_600_000).toISOString(), '--out', join(work, 'fx-later')]);
    expect(future.code).not.toBe(0);
    expect(future.err).toMatch(/until \(.*\) is in the future: the events after now have not arrived/);
    const early = await replayCli(['replay', 'export', '--data', live.dir, '--tag', 'early', '--at', new Date(UNTIL).toISOString(), '--until', new Date(CUT).toISOString(), '--out', join(work, 'fx-early')]);
    expect(early.code).not.toBe(0);
    expect(early.err).toMatch(/is before the cut/);
    expect(tags()).not.toContain('replay-later');
    expect(tags()).not.toContain('replay-early');
    const before = Date.now();
    const now = await replayCli(['replay', 'export', '--data', live.dir, '--tag', 'now', '--until', 'now', '--out', join(work, 'fx-now')]);
    expect(now.code, now.err).toBe(0);
    expect(tags()).toContain('replay-now');
    const m = JSON.parse(read(join(work, 'fx-now'), 'fixture.json')) as FixtureManifest;
    expect(m.untilMs).toBeGreaterThanOrEqual(before);
    expect(m.cutMs).toBe(UNTIL); // the cut's newest snapshot (the live site's last commit), as a later export of the tag reads it
    expect(m.events.count).toBe(0);
    const again = await replayCli(['replay', 'export', '--data', live.dir, '--tag', 'now', '--until', 'now', '--out', join(work, 'fx-now-again')]);
    expect(again.code, again.err).toBe(0);
    expect((JSON.parse(read(join(work, 'fx-now-again'), 'fixture.json')) as FixtureManifest).cutMs).toBe(m.cutMs);
  }, 60_000);

  it('export: --retain lets the site expire the cut; without it the tag stays until deleted, and the output says which', async () => {
    const stockTag = (name: string) => Table.open(join(live.dir, 'warehouse', 'site_s1.db', 'stock')).listTags().find((t) => t.name === name);
    const kept = await replayCli(['replay', 'export', '--data', live.dir, '--tag', 'kept', '--until', 'now', '--out', join(work, 'fx-kept')]);
    expect(kept.code, kept.err).toBe(0);
    expect(kept.out).toContain('the site keeps tag replay-kept until deleted (export with --retain 30d to let it expire)');
    expect(stockTag('replay-kept')?.retainedMillis).toBeUndefined();
    const before = Date.now();
    const month = await replayCli(['replay', 'export', '--data', live.dir, '--tag', 'month', '--until', 'now', '--retain', '30d', '--out', join(work, 'fx-month')]);
    expect(month.code, month.err).toBe(0);
    // Every table's tag of the cut expires 30 days on (the site's expire removes it then).
    for (const t of ['stock', 'work_queue', 'resources', 'approval_inbox']) {
      const tag = Table.open(join(live.dir, 'warehouse', 'site_s1.db', t)).listTags().find((x) => x.name === 'replay-month');
      expect(tag?.retainedMillis, t).toBe(30 * 86_400_000);
    }
    const until = /the site keeps tag replay-month until (\S+)\n$/.exec(month.out)?.[1];
    expect(Date.parse(until!)).toBeGreaterThanOrEqual(before + 30 * 86_400_000 - 1000);
    expect(Date.parse(until!)).toBeLessThanOrEqual(Date.now() + 30 * 86_400_000 + 1000);
    // The cut made before keeps its retention; the output says so.
    const again = await replayCli(['replay', 'export', '--data', live.dir, '--tag', 'kept', '--until', 'now', '--retain', '7d', '--out', join(work, 'fx-kept-again')]);
    expect(again.code, again.err).toBe(0);
    expect(again.out).toContain('the site keeps tag replay-kept, made by an earlier export, until deleted (export with --retain 30d to let it expire): --retain applies to a cut when it is made');
    expect(stockTag('replay-kept')?.retainedMillis).toBeUndefined();
    const bad = await replayCli(['replay', 'export', '--data', live.dir, '--tag', 'bad', '--until', 'now', '--retain', 'a month', '--out', join(work, 'fx-bad')]);
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/option '--retain': expected a duration such as 7d/);
    expect(stockTag('replay-bad')).toBeUndefined();
  }, 60_000);

  it('export: --tag naming another tag of the tables (an agent run’s) cuts at it, and the fixture replays to the live proposals', async () => {
    const wq = () => Table.open(join(live.dir, 'warehouse', 'site_s1.db', 'work_queue'));
    const run = 'agent-20261130-061200-000'; // a live run in the middle of the period
    expect(wq().tags.exists(run)).toBe(true);
    const read = wq().tags.get(run).snapshot; // what that run read
    const both = await replayCli(['replay', 'export', '--data', live.dir, '--tag', run, '--at', new Date(CUT).toISOString(), '--until', new Date(UNTIL).toISOString(), '--out', join(work, 'fx-both')]);
    expect(both.code).not.toBe(0);
    expect(both.err).toContain(`give the cut once: --at, or a tag to cut at (${run})`);
    expect(wq().tags.exists(`replay-${run}`)).toBe(false);

    const dir = join(work, 'fx-run');
    const r = await replayCli(['replay', 'export', '--data', live.dir, '--tag', run, '--until', new Date(UNTIL).toISOString(), '--out', dir]);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toContain(`(tag replay-${run}) to ${dir}: cut at ${run}, `);
    const m = JSON.parse(readFileSync(join(dir, 'fixture.json'), 'utf8')) as FixtureManifest;
    expect(m.cutFrom).toBe(run);
    expect(m.tables.work_queue!.snapshotId).toBe(read.id); // the tag's own snapshots
    expect(m.cutMs).toBeLessThan(Date.UTC(2026, 10, 30, 6, 12)); // committed before the run began
    expect(m.tables.approval_inbox!.snapshotId).not.toBeNull(); // a table the run did not tag: at the cut's instant
    expect(m.liveAgent.runIds).toBeGreaterThan(0); // the run itself is in the period
    const out = await runReplay({ fixture: dir, out: join(work, 'run-from-agent-tag') });
    expect(out.manifest.ingestFailure).toBeNull();
    expect(JSON.parse(readFileSync(join(work, 'run-from-agent-tag', 'proposals.json'), 'utf8'))).toEqual(JSON.parse(readFileSync(join(dir, 'live', 'proposals.json'), 'utf8')));
  }, 60_000);

  it('export: an --out it could not write (a non-empty folder, an existing archive, an archive in a missing folder) is refused before anything is tagged', async () => {
    const tags = () => Table.open(join(live.dir, 'warehouse', 'site_s1.db', 'stock')).listTags().map((t) => t.name);
    const full = join(work, 'out-full');
    mkdirSync(full);
    writeFileSync(join(full, 'something'), 'x');
    await expect(exportFixture({ data: live.dir, tag: 'out-1', untilMs: UNTIL, out: full })).rejects.toThrow(/out-full exists and is not empty/);
    const tar = join(work, 'out-there.tar');
    writeFileSync(tar, 'x');
    await expect(exportFixture({ data: live.dir, tag: 'out-2', untilMs: UNTIL, out: tar })).rejects.toThrow(/out-there\.tar exists/);
    await expect(exportFixture({ data: live.dir, tag: 'out-3', untilMs: UNTIL, out: join(work, 'no-such-folder', 'f.tar') })).rejects.toThrow(/folder .*no-such-folder does not exist/);
    const cliRefused = await replayCli(['replay', 'export', '--data', live.dir, '--tag', 'out-4', '--until', 'now', '--out', join(work, 'no-such-folder', 'f.tar')]);
    expect([cliRefused.code, cliRefused.err]).toEqual([2, `tilstand: option '--out': folder ${join(work, 'no-such-folder')} does not exist\n`]);
    for (const t of ['out-1', 'out-2', 'out-3', 'out-4']) expect(tags()).not.toContain(`replay-${t}`);
    expect(existsSync(join(work, 'no-such-folder'))).toBe(false);
  });

  // Last in this block: it expires the live site's snapshots.
  it('export: an hourly tag is a cut after its snapshots have expired (--at could no longer find them)', async () => {
    const db = join(live.dir, 'warehouse', 'site_s1.db');
    const names = ['approval_inbox', 'dead_letters', 'decision_log', 'resources', 'stock', 'work_queue'];
    const held = new Map<string, number>();
    let expired = 0;
    // On the site's clock: on the real one, expire() also dropped the agent's run tags once their
    // retention had passed since the simulated day (7 days after T0, a test that failed from then on).
    const open = (n: string) => Table.open(join(db, n), { clock: live.clock });
    for (const n of names) {
      const t = open(n);
      const s = t.snapshots.atOrBefore(CUT);
      if (!s) continue;
      t.createTag('hourly-2026113006', s.id); // as the site's scheduled tags make it: each table's latest then
      held.set(n, s.id);
      t.alter([{ kind: 'setOption', key: 'snapshot.num-retained.min', value: '1' }, { kind: 'setOption', key: 'snapshot.num-retained.max', value: '1' }]);
      const w = t.newWriter();
      w.expire();
      w.close();
      // Gone, unless it was the table's latest (a table that wrote nothing after the cut).
      if (open(n).snapshots.atOrBefore(CUT) === undefined) expired++;
    }
    expect(held.size).toBeGreaterThanOrEqual(4);
    expect(expired).toBeGreaterThanOrEqual(3);
    const late = await replayCli(['replay', 'export', '--data', live.dir, '--tag', 'too-late', '--at', new Date(CUT).toISOString(), '--until', new Date(UNTIL).toISOString(), '--out', join(work, 'fx-too-late')]);
    expect(late.code).not.toBe(0);
    expect(late.err).toMatch(/no snapshot of site_s1\.\w+ at or before/);

    // An agent run's tag of that time is on the state tables only, and the inbox's snapshots of
    // its instant are gone: refused, pointing at the hourly tag, with nothing tagged.
    const run = 'agent-20261130-061400-000'; // not cut at before (the run of 06:12 was)
    expect(open('work_queue').tags.exists(run)).toBe(true);
    const gone = await replayCli(['replay', 'export', '--data', live.dir, '--tag', run, '--until', new Date(UNTIL).toISOString(), '--out', join(work, 'fx-gone')]);
    expect(gone.code).not.toBe(0);
    expect(gone.err).toMatch(new RegExp(`${run} is not a tag of (\\w+), and \\1 no longer has a snapshot of its instant .*Cut at a tag every table has, such as that hour's hourly-… tag`));
    expect(Table.open(join(db, 'work_queue')).tags.exists(`replay-${run}`)).toBe(false);

    const dir = join(work, 'fx-hourly');
    const r = await replayCli(['replay', 'export', '--data', live.dir, '--tag', 'hourly-2026113006', '--until', new Date(UNTIL).toISOString(), '--out', dir]);
    expect(r.code, r.err).toBe(0);
    const m = JSON.parse(readFileSync(join(dir, 'fixture.json'), 'utf8')) as FixtureManifest;
    for (const [n, id] of held) expect(m.tables[n]!.snapshotId, n).toBe(id);
    const out = await runReplay({ fixture: dir, out: join(work, 'run-from-hourly') });
    expect(out.manifest.ingestFailure).toBeNull();
    expect(out.manifest.counts.agentRuns).toBeGreaterThan(0);
  }, 60_000);
});

describe('a site whose config.json sets the agent’s thresholds', () => {
  it('records them in the fixture; the default replay runs with them, a rules config changes only what it names', async () => {
    const agent = { defaultReorder: { reorderPoint: 14, orderUpTo: 40 }, idleMsMin: 5 * MIN };
    const site = new LiveSite({ agent });
    const dir = mkdtempSync(join(defaultScratchParent(), 'tilstand-replay-config-'));
    try {
      const gen = new DemoEvents({ site: site.site, seed: 11 });
      site.receive(gen.initial(T0 + 100));
      for (let i = 0; i < 320; i++) site.receive(gen.step(T0 + 1000 + i * 1500 + ((i * 7919) % 1000)));
      await site.advance(T0 + 4 * MIN);
      makeCut(site.catalog, site.database, 'replay-cfg', { clock: site.clock });
      await site.advance(T0 + 8 * MIN);
      site.close();
      const m = await exportFixture({ data: site.dir, tag: 'cfg', untilMs: T0 + 8 * MIN, atMs: T0 + 4 * MIN, out: join(dir, 'fixture') });
      expect(m.liveAgent.config).toEqual(agent);
      const liveProposals = JSON.parse(read(join(dir, 'fixture'), 'live/proposals.json')) as { ruleId: string; params: { qty?: number; position_before?: number } }[];
      // The site's reorder point shows in what it proposed: orders up to 40 from positions under 14.
      const reorders = liveProposals.filter((p) => p.ruleId === 'stock-reorder');
      expect(reorders.length).toBeGreaterThan(0);
      for (const p of reorders) expect(p.params.qty! + p.params.position_before!).toBe(40);

      const r = await runReplay({ fixture: join(dir, 'fixture'), out: join(dir, 'run-default') });
      expect(r.manifest.agent.config).toMatchObject(agent);
      expect(JSON.parse(read(join(dir, 'run-default'), 'proposals.json'))).toEqual(liveProposals);

      // A rules config that names only idleMsMin keeps the live reorder policy.
      const rules = join(dir, 'idle-1.json');
      writeFileSync(rules, JSON.stringify({ label: 'idle-1', config: { idleMsMin: MIN } }));
      const run = await replayCli(['replay', 'run', '--fixture', join(dir, 'fixture'), '--agent', rules, '--out', join(dir, 'run-idle')]);
      expect(run.code, run.err).toBe(0);
      const idle = JSON.parse(read(join(dir, 'run-idle'), 'run.json')) as { agent: { config: Record<string, unknown> } };
      expect(idle.agent.config).toMatchObject({ defaultReorder: agent.defaultReorder, idleMsMin: MIN });
      const report = diffRuns(loadRun(join(dir, 'run-default')), loadRun(join(dir, 'run-idle')), { examples: 1000 });
      expect(report.perRule['stock-reorder']!.added + report.perRule['stock-reorder']!.removed).toBe(0);
      // A changed threshold makes the first run evaluate every row, as on a site (README, "A
      // replay"): a row it sees crossing the point is new to it, so its explanation lacks the
      // "(was …)" of the live one. What it orders is the same.
      for (const c of report.examples.changed.filter((x) => x.ruleId === 'stock-reorder')) {
        expect(c.fields).toEqual(['explanation']);
        expect(c.baseline.explanation.replace(/ \(was -?\d+\)/, '')).toBe(c.candidate.explanation);
      }
    } finally {
      site.remove();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);

  it('export refuses a config.json agent section the agent would refuse, naming the key', async () => {
    const site = new LiveSite();
    const dir = mkdtempSync(join(defaultScratchParent(), 'tilstand-replay-config-'));
    try {
      await site.advance(T0 + 2 * MIN);
      makeCut(site.catalog, site.database, 'replay-bad', { clock: site.clock });
      site.close();
      const file = join(site.dir, 'config.json');
      writeFileSync(file, JSON.stringify({ ...JSON.parse(readFileSync(file, 'utf8')), agent: { reorderByItem: { BOLT: { reorderPoint: 9, orderUpTo: 3 } } } }));
      await expect(exportFixture({ data: site.dir, tag: 'bad', untilMs: T0 + 2 * MIN, out: join(dir, 'fixture') })).rejects.toThrow(/config\.json: agent\.reorderByItem\.BOLT: expected orderUpTo > reorderPoint, got 3 ≤ 9/);
      expect(existsSync(join(dir, 'fixture'))).toBe(false);
      // A hand edit that broke the JSON is named with its line and column.
      writeFileSync(file, '{\n  "site": "s1",\n  "agent": {}\n  "journal": {}\n}\n');
      await expect(exportFixture({ data: site.dir, tag: 'bad', untilMs: T0 + 2 * MIN, out: join(dir, 'fixture') })).rejects.toThrow(/config\.json is not valid JSON: .* \(line 4, column 3\)$/);
    } finally {
      site.remove();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a cut made before the live agent’s first run (a site that had just started)', () => {
  it('replays on the live timer’s phase, taken from the runs in the period', async () => {
    const site = new LiveSite();
    try {
      const gen = new DemoEvents({ site: site.site, seed: 11 });
      site.receive(gen.initial(T0 + 100));
      for (let i = 0; i < 300; i++) site.receive(gen.step(T0 + 1000 + i * 1500 + ((i * 7919) % 1000)));
      const phase = T0 + 25_000; // the site started 25 s in: its agent runs at phase + k minutes
      await site.advance(T0 + 20_000, { agentPhaseMs: phase });
      makeCut(site.catalog, site.database, 'replay-early', { clock: site.clock });
      const until = T0 + 7 * MIN;
      await site.advance(until, { agentPhaseMs: phase, people });
      site.close();
      const fx = join(work, 'fixture-early');
      const m = await exportFixture({ data: site.dir, tag: 'early', untilMs: until, out: fx });
      expect(m.liveAgent.baselineRunId).toBeNull();
      expect(m.liveProposals).toBeGreaterThan(3);
      const r = await runReplay({ fixture: fx, out: join(work, 'run-early') });
      expect(r.manifest.clock.firstAgentRunMs).toBe(phase + MIN);
      expect(r.manifest.counts.decisionsUnmatched).toBe(0);
      expect(JSON.parse(read(join(work, 'run-early'), 'proposals.json'))).toEqual(JSON.parse(read(fx, 'live/proposals.json')));
    } finally {
      site.remove();
    }
  }, 60_000);

  it('timerRunMs passes over runs a decision set off', () => {
    const id = (ms: number) => new Date(ms).toISOString().replace(/[-:]/g, '').replace('T', '-').replace('.', '-').slice(0, 19);
    expect(id(T0 + 25_013)).toBe('20261130-060025-013');
    const runs = [T0 + 10_500, T0 + 25_013, T0 + 85_014, T0 + 97_000, T0 + 145_015].map(id);
    expect(timerRunMs(runs, MIN)).toBe(T0 + 25_013);
    expect(timerRunMs([id(T0 + 10_500)], MIN)).toBe(T0 + 10_500);
    expect(timerRunMs([], MIN)).toBeUndefined();
  });
});

describe('a cut just after a run that a decision set off (a stale approval runs the agent at once)', () => {
  it('replays on the live timer’s phase, not on that run’s', async () => {
    const site = new LiveSite();
    try {
      const gen = new DemoEvents({ site: site.site, seed: 11 });
      site.receive(gen.initial(T0 + 100));
      for (let i = 0; i < 300; i++) site.receive(gen.step(T0 + 1000 + i * 1500 + ((i * 7919) % 1000)));
      await site.advance(T0 + 3 * MIN + 30_000);
      // What the inbox's `reevaluate` does after a stale approval: one run now, between the timer's.
      site.runs.push(site.agent.run());
      await site.advance(T0 + 3 * MIN + 40_000);
      makeCut(site.catalog, site.database, 'replay-offphase', { clock: site.clock });
      const until = T0 + 7 * MIN;
      await site.advance(until, { people });
      site.close();
      const fx = join(work, 'fixture-offphase');
      const m = await exportFixture({ data: site.dir, tag: 'offphase', untilMs: until, out: fx });
      expect(m.liveAgent.baselineRunId).toBe('20261130-060330-000'); // the newest run before the cut
      const r = await runReplay({ fixture: fx, out: join(work, 'run-offphase') });
      expect(r.manifest.clock.firstAgentRunMs).toBe(T0 + 4 * MIN); // the timer's next minute
      expect(JSON.parse(read(join(work, 'run-offphase'), 'proposals.json'))).toEqual(JSON.parse(read(fx, 'live/proposals.json')));
    } finally {
      site.remove();
    }
  }, 60_000);
});

describe('a period that ends off the tick grid (--until now: any millisecond)', () => {
  it('feeds the events received after the period’s last tick instant too', async () => {
    const site = new LiveSite();
    try {
      const gen = new DemoEvents({ site: site.site, seed: 3 });
      site.receive(gen.initial(T0 + 100));
      await site.advance(T0 + 20_000);
      makeCut(site.catalog, site.database, 'replay-end', { clock: site.clock });
      site.receive(gen.step(T0 + 30_000));
      site.receive(gen.step(T0 + 40_100)); // received 100 ms after a tick instant
      await site.advance(T0 + 40_250);
      site.close();
      const fx = join(work, 'fixture-end');
      const m = await exportFixture({ data: site.dir, tag: 'end', untilMs: T0 + 40_200, out: fx });
      expect(m.events.lastAtMs).toBe(T0 + 40_100);
      const r = await runReplay({ fixture: fx, out: join(work, 'run-end') });
      expect(r.manifest.ingestFailure).toBeNull();
      expect(r.manifest.counts.events).toBe(m.events.count);
    } finally {
      site.remove();
    }
  }, 60_000);
});

describe('an export that fails part-way', () => {
  it('leaves neither a half-written folder (a retry would refuse it) nor the tags it made', async () => {
    const site = new LiveSite();
    try {
      const gen = new DemoEvents({ site: site.site, seed: 3 });
      site.receive(gen.initial(T0 + 100));
      await site.advance(T0 + 20_000);
      makeCut(site.catalog, site.database, 'replay-pruned', { clock: site.clock });
      for (let i = 0; i < 20; i++) site.receive(gen.step(T0 + 21_000 + i * 1000));
      await site.advance(T0 + 45_000);
      site.close();
      // The journal no longer holds the events after either cut: the export fails after its tables.
      const j = Journal.open(site.dir);
      try {
        await j.prune({ maxAgeMs: 0, keepAfter: j.lastPosition() - 1n });
      } finally {
        j.close();
      }
      const parent = join(work, 'failed-exports');
      mkdirSync(parent);
      const fx = join(parent, 'fixture');
      await expect(exportFixture({ data: site.dir, tag: 'pruned', untilMs: T0 + 45_000, out: fx })).rejects.toThrow(/no longer holds position/);
      await expect(exportFixture({ data: site.dir, tag: 'fresh', atMs: T0 + 20_000, untilMs: T0 + 45_000, out: join(parent, 'new', 'fixture') })).rejects.toThrow(/no longer holds position/);
      expect(readdirSync(parent)).toEqual([]); // no fixture, no folder made for it, no temporary folder
      // The cut made before stays; the one this export made is taken back.
      const tags = Table.open(join(site.dir, 'warehouse', 'site_s1.db', 'stock')).listTags().map((t) => t.name);
      expect(tags).toContain('replay-pruned');
      expect(tags).not.toContain('replay-fresh');
    } finally {
      site.remove();
    }
  }, 60_000);
});
