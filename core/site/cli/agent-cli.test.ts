// `tilstand proposals | decide | agent run | evidence` in-process on an initialized data directory
// with no site running (the commands open the directory themselves).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Catalog } from '../../lsm/index.ts';
import { dataPaths, readConfig, writeConfig } from '../config.ts';
import { initDataDir } from '../init.ts';
import { EVIDENCE_TIMES_LINE } from './agent-cli.ts';
import { runMain as run } from './test-support.ts';

let dir: string;
let data: string;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-agent-cli-'));
  data = join(dir, 'd');
  await initDataDir({ data, site: 's1', admin: { name: 'ada', pin: '2468' }, scrypt: { N: 1 << 10, r: 8, p: 1 } });
  // State as ingest would have committed it: one released job, one free machine.
  const catalog = new Catalog(dataPaths(data).warehouse);
  const put = (table: string, row: Record<string, unknown>) => {
    const w = catalog.getTable({ database: 'site_s1', table }).newWriter();
    w.writeRecord(row);
    w.commit();
    w.close();
  };
  put('work_queue', { job_id: 'J-1', status: 'released', capability: 'pick', priority: 1, ops_seq: 1n });
  put('resources', { resource_id: 'M-1', kind: 'machine', capability: 'pick', state: 'free', since: Date.now() * 1000, ops_seq: 1n });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('tilstand agent commands (no site running)', () => {
  it('agent run → proposals → evidence → decide approve (the command waits for the site)', async () => {
    const r = await run(['agent', 'run', '--data', data]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/agent run \S+: 1 new/);

    const list = await run(['proposals', '--data', data, '--status', 'open', '--json']);
    const proposals = JSON.parse(list.out) as { id: string; action: string }[];
    expect(proposals.map((p) => p.action)).toEqual(['assign_job']);
    const id = proposals[0]!.id;
    expect((await run(['proposals', '--data', data])).out).toMatch(new RegExp(`${id}  open .* assign_job`));
    // Times in the site PC's zone, with the offset said (the ids carry UTC).
    const createdAtMs = (proposals[0] as unknown as { createdAtMs: number }).createdAtMs;
    const tz = process.env.TZ;
    process.env.TZ = 'Asia/Kolkata'; // +05:30 all year
    try {
      const local = new Date(createdAtMs + 5.5 * 3_600_000).toISOString().slice(0, 19).replace('T', ' ');
      expect((await run(['proposals', '--data', data])).out).toContain(`${id}  open  ${local} +05:30  low  assign_job`);
    } finally {
      if (tz === undefined) delete process.env.TZ;
      else process.env.TZ = tz;
    }

    const ev = await run(['evidence', id, '--data', data]);
    expect(ev.code).toBe(0);
    expect(ev.out).toMatch(/rows at the tag match the record/);
    expect(ev.out).toMatch(/"job_id":"J-1"/);

    const refused = await run(['decide', id, 'approve', '--user', 'ada', '--pin', '0000', '--data', data]);
    expect(refused.code).toBe(3);
    expect(refused.err).toMatch(/refused: wrong pin/);

    const ok = await run(['decide', id, 'approve', '--user', 'ada', '--pin', '2468', '--comment', 'go', '--data', data]);
    expect(ok.err).toBe('');
    expect(ok.out).toMatch(new RegExp(`${id}: approved`));
    expect(ok.out).toMatch(/command pending on tilstand\/s1\/commands\/operations \(no site running/);
    expect((await run(['proposals', '--data', data, '--status', 'approved'])).out).toMatch(/approved by ada \[pending\]/);
    expect((await run(['evidence', id, '--data', data])).out).toMatch(/refused[\s\S]*approved\s+ada/);

    // Beside the evidence, the state the approval was checked against: each table's checked
    // snapshot, its tag checked-<id>, and the cited rows read there.
    const wq = new Catalog(dataPaths(data).warehouse).getTable({ database: 'site_s1', table: 'work_queue' });
    const checkedAt = wq.tags.get(`checked-${id}`).snapshot.id;
    const after = await run(['evidence', id, '--data', data]);
    expect(after.out).toMatch(new RegExp(`checked at approval \\(the state the re-check read\\):\\n  work_queue at snapshot ${checkedAt} \\(tag checked-${id}, kept until \\S+\\) — cited rows as the evidence recorded\\n {4}\\{"job_id":"J-1"`));
    const report = JSON.parse((await run(['evidence', id, '--data', data, '--json'])).out) as { tables: unknown[]; checked: { table: string; snapshotId: number; tag: string; tagExists: boolean; matchesEvidence: boolean | null }[] };
    expect(report.tables.length).toBeGreaterThan(0); // the evidence as before
    expect(report.checked.map((c) => c.table).sort()).toEqual(['resources', 'stock', 'work_queue']);
    expect(report.checked.find((c) => c.table === 'work_queue')).toMatchObject({ snapshotId: checkedAt, tag: `checked-${id}`, tagExists: true, matchesEvidence: true });
  });

  it("evidence says once, under its header, that its times are UTC: a row's TIMESTAMP carries no zone; --json as stored", async () => {
    expect((await run(['agent', 'run', '--data', data])).code).toBe(0);
    const id = (JSON.parse((await run(['proposals', '--data', data, '--json'])).out) as { id: string }[])[0]!.id;
    const ev = await run(['evidence', id, '--data', data, '--all']);
    const lines = ev.out.split('\n');
    expect(lines[0]).toMatch(new RegExp(`^proposal ${id} {2}open`));
    expect(lines[1]).toBe("  times      UTC: the instants (…Z) and the rows' TIMESTAMP values, which carry no zone");
    expect(lines.filter((l) => l === EVIDENCE_TIMES_LINE)).toHaveLength(1);
    // The resources row's `since` (TIMESTAMP(3)) as stored: no zone, beside the …Z instants.
    const since = /"since":"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3})"/.exec(ev.out)?.[1];
    expect(since, ev.out).toBeDefined();
    expect(ev.out).toMatch(/proposed \d{4}-\d\d-\d\dT[\d:.]+Z/);
    const json = (await run(['evidence', id, '--data', data, '--json'])).out;
    expect(json).not.toContain('times ');
    expect(json).toMatch(new RegExp(`"since": ?"${since}"`));
  });

  it('keeps evidence as config.json evidence says: run tags proposingRunsMs, decision tags decisionsMs', async () => {
    const DAY = 86_400_000;
    writeConfig(data, { ...readConfig(data), evidence: { proposingRunsMs: 2 * DAY, otherRunsMs: DAY, decisionsMs: 3 * 365 * DAY } });
    expect((await run(['agent', 'run', '--data', data])).code).toBe(0);
    const id = (JSON.parse((await run(['proposals', '--data', data, '--json'])).out) as { id: string }[])[0]!.id;
    expect((await run(['decide', id, 'reject', '--user', 'ada', '--pin', '2468', '--data', data])).code).toBe(0);
    const wq = new Catalog(dataPaths(data).warehouse).getTable({ database: 'site_s1', table: 'work_queue' });
    const tags = Object.fromEntries(wq.listTags().map((t) => [t.name.replace(/-.*/, ''), t.retainedMillis]));
    expect(tags).toEqual({ agent: 2 * DAY, decision: 3 * 365 * DAY });
  });

  it("proposes by config.json agent's thresholds: an item's own reorder policy beside the default", async () => {
    writeConfig(data, { ...readConfig(data), agent: { ...readConfig(data).agent, reorderByItem: { BOLT: { reorderPoint: 50, orderUpTo: 200 } } } });
    const stock = new Catalog(dataPaths(data).warehouse).getTable({ database: 'site_s1', table: 'stock' });
    const w = stock.newWriter();
    // Position 30 for both: under BOLT's reorder point 50, above the default 5 for NUT.
    for (const item of ['BOLT', 'NUT']) w.writeRecord({ item, location: 'A-01', on_hand: 30, inventory_seq: 1n, reserved: 0, commerce_seq: 1n, inbound: 0, procurement_seq: 1n });
    w.commit();
    w.close();
    expect((await run(['agent', 'run', '--data', data])).code).toBe(0);
    const open = JSON.parse((await run(['proposals', '--data', data, '--json'])).out) as { action: string; params: Record<string, unknown>; risk: string }[];
    const replenish = open.filter((p) => p.action === 'replenish');
    // 200 − 30 = 170 units: from 100 up (replenishQtyMediumMin) a medium risk.
    expect(replenish).toMatchObject([{ params: { item: 'BOLT', location: 'A-01', qty: 170 }, risk: 'medium' }]);
  });

  it('proposals without --status lists those waiting for a decision first, then the rest; newest first in each (the help says so)', async () => {
    const catalog = new Catalog(dataPaths(data).warehouse);
    const put = (table: string, row: Record<string, unknown>) => {
      const w = catalog.getTable({ database: 'site_s1', table }).newWriter();
      w.writeRecord(row);
      w.commit();
      w.close();
    };
    const ids = async () => (JSON.parse((await run(['proposals', '--data', data, '--json'])).out) as { id: string; status: string; params: { job_id: string } }[]).map((p) => `${p.params.job_id} ${p.status}`);
    expect((await run(['agent', 'run', '--data', data])).code).toBe(0); // J-1 on M-1: open
    put('work_queue', { job_id: 'J-2', status: 'released', capability: 'pack', priority: 1, ops_seq: 2n });
    put('resources', { resource_id: 'M-2', kind: 'machine', capability: 'pack', state: 'free', since: Date.now() * 1000, ops_seq: 2n });
    expect((await run(['agent', 'run', '--data', data])).code).toBe(0); // J-2 on M-2: open, newer
    expect(await ids()).toEqual(['J-2 open', 'J-1 open']);
    // J-2 started on the floor without Tilstand: the next run withdraws its proposal.
    put('work_queue', { job_id: 'J-2', status: 'in_progress', capability: 'pack', priority: 1, assigned_resource: 'M-2', ops_seq: 3n });
    expect((await run(['agent', 'run', '--data', data])).code).toBe(0);
    // Was J-2 withdrawn first (newest first over every status), the open one under it.
    expect(await ids()).toEqual(['J-1 open', 'J-2 withdrawn']);
    const one = await run(['proposals', '--data', data, '--limit', '1']);
    expect(one.out).toMatch(/^\S+ {2}open {2}/);
    expect(one.out).not.toContain('withdrawn');
    // --status lists that status alone, as before.
    expect((JSON.parse((await run(['proposals', '--data', data, '--status', 'withdrawn', '--json'])).out) as { status: string }[]).map((p) => p.status)).toEqual(['withdrawn']);
    expect((await run(['proposals', '--help'])).out).toContain('without --status: those waiting for a decision (open, deferred) first, then the rest; newest first in each');
    // A deferred proposal waits too: above the withdrawn one, though made before it.
    const j1 = (JSON.parse((await run(['proposals', '--data', data, '--status', 'open', '--json'])).out) as { id: string }[])[0]!.id;
    expect((await run(['decide', j1, 'defer', '--user', 'ada', '--pin', '2468', '--data', data])).code).toBe(0);
    expect(await ids()).toEqual(['J-1 deferred', 'J-2 withdrawn']);
  });

  it('proposals: a bad --limit is refused on a new site too, before the inbox table exists', async () => {
    for (const bad of ['-1', '0', 'ten']) {
      const r = await run(['proposals', '--data', data, '--limit', bad]);
      expect([r.code, r.out, r.err], bad).toEqual([2, '', `tilstand: option '--limit': expected a whole number ≥ 1, got '${bad}'\n`]);
    }
  });

  it('refuses an argument a command does not take instead of ignoring it', async () => {
    // `proposals open` meant --status open: it listed every proposal.
    for (const [args, command, extra] of [
      [['proposals', 'open'], 'proposals', 'open'],
      [['agent', 'run', 'now'], 'agent', 'now'],
      [['evidence', 'P-x', 'P-y'], 'evidence', 'P-y'],
      [['decide', 'P-x', 'approve', 'now', '--user', 'ada', '--pin', '2468'], 'decide', 'now'],
    ] as const) {
      const r = await run([...args, '--data', data]);
      expect([r.code, r.out, r.err], args.join(' ')).toEqual([2, '', `tilstand: '${command}': unexpected argument '${extra}'\n`]);
    }
  });

  // RunResult.notes (core/agents: what a rule left out and why, e.g. stock-reorder v9's rows
  // inventory has not counted) was in --json only: the run's lines said "0 new" and nothing of them.
  it("agent run prints the run's notes: a stock row with no count from inventory is said not evaluated", async () => {
    const w = new Catalog(dataPaths(data).warehouse).getTable({ database: 'site_s1', table: 'stock' }).newWriter();
    // commerce's reservation came first: no on_hand yet.
    w.writeRecord({ item: 'SKU-9', location: 'L-2', reserved: 4, commerce_seq: 1n });
    w.commit();
    w.close();
    const r = await run(['agent', 'run', '--data', data]);
    expect([r.code, r.err]).toEqual([0, '']);
    expect(r.out).toContain('  note from rule stock-reorder: not evaluated, on hand not known yet (no count from inventory): SKU-9 at L-2\n');
    const j = JSON.parse((await run(['agent', 'run', '--data', data, '--json'])).out) as { notes: unknown[] };
    expect(Array.isArray(j.notes)).toBe(true);
  });

  it('checks arguments', async () => {
    expect((await run(['decide', 'P-x', 'maybe', '--user', 'a', '--pin', '1', '--data', data])).code).toBe(2);
    expect((await run(['proposals', '--status', 'nope', '--data', data])).code).toBe(2);
    expect((await run(['agent', 'walk', '--data', data])).code).toBe(2);
    const missing = await run(['evidence', 'P-none', '--data', data]);
    expect(missing.code).toBe(1);
    expect(missing.err).toMatch(/does not exist/);
  });
});
