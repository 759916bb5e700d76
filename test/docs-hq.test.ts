// docs/hq.md ("Reading sites at headquarters") is what an analyst at HQ has: HQ's layout, the tags
// a site ships, each `tilstand hq` command and what it prints, how a proposal's evidence is read,
// and how a Paimon engine sees HQ. Each check runs the page's own text against a site synced into
// a directory HQ the way a site syncs (SyncEngine): its commands through `tilstand`, its layout
// against HQ's files, its sample output against what the command prints, its names against the
// table store's catalog. The engines' SQL itself is not run (no engine here); the names it uses are.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_AGENT_CONFIG } from '../core/agents/index.ts';
import { agentColumns, APPROVAL_INBOX_SPEC, APPROVAL_INBOX_TABLE, decisionColumns, DECISION_LOG_SPEC, type InboxRow } from '../core/inbox/index.ts';
import { EXIT } from '../core/lsm/cli/args.ts';
import { Catalog, RowKind } from '../core/lsm/index.ts';
import { runMain } from '../core/site/cli/test-support.ts';
import { DEFAULT_SCHEDULED_TAGS, hourlyTagName } from '../core/sync/scheduled-tags.ts';
import { makeSite, writeStock, type SiteFixture } from '../core/sync/test-support/site-fixture.ts';
import { shipToDirectory } from '../core/sync/test-support/ship.ts';

const ROOT = join(import.meta.dirname, '..');
const DOC = readFileSync(join(ROOT, 'docs/hq.md'), 'utf8');
/** The page's fenced blocks in the language `lang` ('' for none), each its text. */
function fenced(lang: string): string[] {
  const out: string[] = [];
  let open: { lang: string; lines: string[] } | null = null;
  for (const line of DOC.split('\n')) {
    if (!line.startsWith('```')) open?.lines.push(line);
    else if (open === null) open = { lang: line.slice(3).trim(), lines: [] };
    else {
      if (open.lang === lang) out.push(`${open.lines.join('\n')}\n`);
      open = null;
    }
  }
  return out;
}
/** The page's `tilstand …` command lines, in order. */
const COMMANDS = fenced('sh').flatMap((b) => b.split('\n')).filter((l) => l.startsWith('tilstand '));
const SAMPLE = fenced('').find((b) => b.startsWith('proposal '))!;

const dir = mkdtempSync(join(tmpdir(), 'tilstand-docs-hq-'));
const hqDir = join(dir, 'hq');
const DECIDED = 'P-20261205-135922-612-13';
const RUN_TAG = 'agent-20261205-135922-612';
let fx: SiteFixture;

/** A page's command line with its placeholders made real: HQ, the pull's warehouse, the export files. */
function argv(line: string): string[] {
  return line
    .replace(/^tilstand /, '')
    .replaceAll('$HQ', hqDir)
    .replaceAll('/srv/hq-copy', join(dir, 'copy'))
    .replace(/--out (stock\.\w+)/, (_m, f: string) => `--out ${join(dir, f)}`)
    .split(/\s+/);
}

beforeAll(async () => {
  // The site's clock at the times the page shows: commits carry these times, so the page's
  // `--at` and hourly tags name the same states here as on the site the page was written from.
  vi.useFakeTimers({ toFake: ['Date'] });
  try {
    vi.setSystemTime(new Date('2026-12-05T13:10:00Z'));
    fx = makeSite('demo', { rows: 5 });
    const stock = fx.table('stock');
    stock.createTag(hourlyTagName(Date.now()));
    // work_queue, as the page's evidence example reads it.
    const wq = fx.catalog.createTable({ database: 'site_demo', table: 'work_queue' }, {
      fields: [{ name: 'job_id', type: 'STRING NOT NULL' }, { name: 'status', type: 'STRING' }, { name: 'due_at', type: 'TIMESTAMP(3)' }],
      primaryKeys: ['job_id'],
      options: { bucket: '1' },
    });
    vi.setSystemTime(new Date('2026-12-05T13:59:21.584Z'));
    const w = wq.newWriter();
    try {
      w.write(['J-0013', 'released', Date.UTC(2026, 11, 5, 14, 58, 22, 691) * 1000], RowKind.INSERT);
      w.commit();
    } finally {
      w.close();
    }
    wq.createTag(RUN_TAG);
    wq.createTag(`decision-${DECIDED}`);
    // What its approval was checked against, the same snapshot here (core/inbox keepChecked).
    wq.createTag(`checked-${DECIDED}`);
    const inbox = fx.table(APPROVAL_INBOX_TABLE).newWriter();
    try {
      const created = Date.parse('2026-12-05T13:59:22.752Z');
      const input = {
        situationKey: 'escalate-job|escalate_job|job_id="J-0013"', ruleId: 'escalate-job', ruleVersion: '1', action: 'escalate_job', module: 'operations',
        params: { job_id: 'J-0013', due_at: '2026-12-05T14:58:22.691Z', priority_from: 2, reason: 'will finish about 1 min after its due time' },
        risk: 'low' as const, riskReason: 'reversible',
        explanation: 'Job J-0013 is released and due 2026-12-05T14:58:22.691Z. Started now it takes about 60 min (forklift), so it ends about 1 min late. Raise its priority from 2.',
        evidence: [{ table: 'work_queue', snapshotId: wq.latestSnapshot()!.id, tag: RUN_TAG, rows: [{ key: { job_id: 'J-0013' }, values: { job_id: 'J-0013', status: 'released', due_at: '2026-12-05T14:58:22.691' } }] }],
        runId: '20261205-135922-612',
      };
      const row: InboxRow = {
        ...agentColumns(DECIDED, input, created, 'open', null, created),
        agent_seq: 1n,
        ...decisionColumns({ kind: 'approved', by: 'demo', role: 'admin', atMs: created + 40_000, comment: 'ok from floor', snapshots: { seen: { work_queue: 1 }, checked: { work_queue: 1 } }, reason: null }),
        decision_seq: 1n,
        command_state: 'applied', command_topic: 'tilstand/demo/commands/operations', command_sent_at_ms: BigInt(created + 40_500), command_updated_at_ms: BigInt(created + 43_000), command_detail: '{}', command_seq: 1n,
      };
      inbox.writeRecord(row);
      inbox.commit();
    } finally {
      inbox.close();
    }
    vi.setSystemTime(new Date('2026-12-05T14:00:14Z'));
    writeStock(fx, 5, 8, 2);
    stock.createTag(hourlyTagName(Date.now()));
    // The site's newest commit, not on a whole second: `hq sites` prints it as the page shows it.
    vi.setSystemTime(new Date('2026-12-05T14:40:07.318Z'));
    writeStock(fx, 8, 10, 3);
  } finally {
    vi.useRealTimers();
  }
  await shipToDirectory(fx.data, fx.site, hqDir);
}, 60_000);
afterAll(() => {
  rmSync(fx.data, { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
});

describe('docs/hq.md', () => {
  it("runs each of the page's commands, exit 0, in the order shown", async () => {
    expect(COMMANDS.length).toBeGreaterThanOrEqual(12);
    for (const line of COMMANDS) {
      const r = await runMain(argv(line));
      expect(r.code, `${line}\n${r.err}`).toBe(0);
    }
    expect(readdirSync(dir).sort()).toEqual(['copy', 'hq', 'stock.csv', 'stock.parquet']);
  });

  it('describes HQ as it is: the layout, one snapshot per table, the dot folder no catalog lists', () => {
    const layout = fenced('').find((b) => b.startsWith('site_<id>.db/'))!;
    const paths = layout.split('\n').filter(Boolean).map((l) => l.split(/\s{2,}/)[0]!);
    expect(paths).toHaveLength(7);
    const db = join(hqDir, 'site_demo.db');
    const stock = join(db, 'stock');
    expect(readdirSync(db).sort()).toEqual(['.tilstand', 'approval_inbox', 'decision_log', 'stock', 'work_queue']);
    expect(readdirSync(join(stock, 'schema'))).toContain('schema-0');
    expect(readdirSync(stock)).toEqual(expect.arrayContaining(['manifest', 'bucket-0', 'snapshot', 'tag', 'schema']));
    const snaps = readdirSync(join(stock, 'snapshot')).sort();
    expect(snaps).toHaveLength(3);
    const n = snaps.find((s) => s.startsWith('snapshot-'))!.slice('snapshot-'.length);
    expect(snaps).toEqual(['EARLIEST', 'LATEST', `snapshot-${n}`]);
    for (const h of ['EARLIEST', 'LATEST']) expect(readFileSync(join(stock, 'snapshot', h), 'utf8').trim()).toBe(n);
    expect(readdirSync(join(stock, 'tag')).sort()).toEqual(['tag-hourly-2026120513', 'tag-hourly-2026120514']);
    expect(readdirSync(join(db, '.tilstand')).sort()).toEqual(['contracts', 'sender.json']);
    // A Paimon catalog over HQ: the database site_<id>, the tables, not the dot folder.
    const catalog = new Catalog(hqDir);
    expect(catalog.listDatabases()).toEqual(['site_demo']);
    expect(catalog.listTables('site_demo')).toEqual(['approval_inbox', 'decision_log', 'stock', 'work_queue']);
    expect(catalog.getTable({ database: 'site_demo', table: 'stock' }).listTags().map((t) => t.name)).toEqual(['hourly-2026120513', 'hourly-2026120514']);
  });

  it("names the tags the way the site makes them, with the site's default retentions", () => {
    expect(DOC).toContain('`hourly-2026120514`: the first sync after 14:00 UTC');
    expect(hourlyTagName(Date.UTC(2026, 11, 5, 14, 0, 14))).toBe('hourly-2026120514');
    expect(DEFAULT_SCHEDULED_TAGS).toMatchObject({ timeZone: 'utc', retainedMs: 7 * 86_400_000 });
    expect(DOC).toMatch(/`hourly-<yyyyMMddHH>` .* \| for good \(the site keeps it 7 days\) \|/);
    expect([DEFAULT_AGENT_CONFIG.evidenceRetentionMs, DEFAULT_AGENT_CONFIG.baselineRetentionMs]).toEqual([7 * 86_400_000, 86_400_000]);
    expect(DOC).toContain('by default 7 days for a run that proposed, renewed while a proposal citing it waits; 1 day for other runs');
  });

  it("quotes --at's note as the command prints it, and reads the same rows as the tag it names", async () => {
    const line = COMMANDS.find((l) => l.includes(' --at '))!;
    const r = await runMain(argv(line));
    const quoted = /such as\s+`(tilstand: --at [^`]+)`/.exec(DOC)![1]!.replace(/\s+/g, ' ');
    // The snapshot id is the site's own; the rest is word for word.
    expect(r.err.trim()).toMatch(new RegExp(`^${quoted.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace('snapshot 17', 'snapshot \\d+')}$`));
    const tag = await runMain(argv(line.replace(/--at \S+/, '--tag hourly-2026120514')));
    expect(r.out).toBe(tag.out);
    expect(r.out.split('\n')[0]).toBe('item,location,qty,note'); // CSV: a header line first
  });

  it("shows hq sites' state-as-of time as it prints, and --at with it reads each table as HQ holds it", async () => {
    const r = await runMain(['hq', 'sites', '--hq', hqDir]);
    expect(r.code, r.err).toBe(0);
    const [header, line] = r.out.trimEnd().split('\n');
    const asOf = line!.split(/\s{2,}/)[header!.split(/\s{2,}/).indexOf('state as of')]!;
    const quoted = /`state as of`, the newest commit HQ holds from the site \(UTC to the millisecond, such as\s+`([^`]+)`: given to `hq scan --at`/.exec(DOC)![1]!;
    expect(asOf).toBe(quoted);
    // The time as printed (was cut to the second: 14:40:07Z read stock before its newest commit).
    for (const t of ['stock', 'approval_inbox', 'decision_log', 'work_queue']) {
      const at = await runMain(['hq', 'scan', '--hq', hqDir, '--site', 'demo', '--table', t, '--at', asOf]);
      expect([at.code, at.out], `${t}: ${at.err}`).toEqual([0, (await runMain(['hq', 'scan', '--hq', hqDir, '--site', 'demo', '--table', t])).out]);
      expect(at.err, t).toMatch(/: reading the latest synced snapshot \(snapshot \d+,/);
    }
  });

  it("agrees with the site's own scan at a tag, as the page says", async () => {
    const hq = await runMain(['hq', 'scan', '--hq', hqDir, '--site', 'demo', '--table', 'stock', '--tag', 'hourly-2026120514']);
    const site = await runMain(['table', 'scan', '--warehouse', join(fx.data, 'warehouse'), 'site_demo.stock', '--tag', 'hourly-2026120514']);
    expect([hq.code, site.code]).toEqual([0, 0]);
    expect(hq.out.trim().split('\n')).toHaveLength(8);
    expect(hq.out).toBe(site.out);
    expect(DOC).toContain('`tilstand table scan --warehouse <data>/warehouse site_demo.stock --tag hourly-2026120514`');
  });

  it("shows hq proposals --format text as it prints, and the evidence tag it names reads the agent's rows", async () => {
    const r = await runMain(['hq', 'proposals', '--hq', hqDir, '--site', 'demo', '--format', 'text']);
    expect(r.code, r.err).toBe(0);
    const norm = (l: string) => l.trim().split(/\s{2,}/);
    const [header, row, names] = SAMPLE.trimEnd().split('\n');
    const lines = r.out.trimEnd().split('\n');
    expect(norm(lines[0]!)).toEqual(norm(header!));
    expect(norm(lines.find((l) => l.startsWith(DECIDED))!)).toEqual(norm(row!));
    expect(lines.at(-1)).toBe(names);
    const evidence = /^```sh\n(tilstand hq scan [^\n]*--tag decision-[^\n]*)\n```/m.exec(DOC)![1]!;
    const scan = await runMain(argv(evidence));
    expect(scan.code, scan.err).toBe(0);
    expect(JSON.parse(scan.out)).toEqual({ job_id: 'J-0013', status: 'released', due_at: '2026-12-05T14:58:22.691' });
  });

  it("names in its column table only columns approval_inbox and decision_log have, and evidence as it is", async () => {
    const table = DOC.slice(DOC.indexOf('| column | what |'), DOC.indexOf('`decision_log` has one row'));
    const named = [...table.matchAll(/^\| ([^|]+) \|/gm)].flatMap((m) => [...m[1]!.matchAll(/`([a-z_]+)`/g)].map((c) => c[1]!));
    expect(named.length).toBeGreaterThan(15);
    const columns = new Set(APPROVAL_INBOX_SPEC.fields.map((f) => f.name));
    expect(named.filter((c) => !columns.has(c))).toEqual([]);
    expect(DECISION_LOG_SPEC.fields.map((f) => f.name)).toEqual(expect.arrayContaining(['actor', 'at_ms']));
    const r = await runMain(['hq', 'proposals', '--hq', hqDir, '--site', 'demo', '--status', 'approved']);
    const p = r.out.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>).find((x) => x.proposal_id === DECIDED)!;
    expect(Object.keys(p)[0]).toBe('status');
    const ev = JSON.parse(p.evidence as string) as Record<string, unknown>[];
    expect(Object.keys(ev[0]!).sort()).toEqual(['rows', 'snapshotId', 'table', 'tag']);
    expect(Object.keys((ev[0]!.rows as object[])[0]!).sort()).toEqual(['key', 'values']);
    expect(Object.keys(JSON.parse(p.decision_snapshots as string) as object).sort()).toEqual(['checked', 'seen']);
  });

  it('gives the exit codes tilstand uses', () => {
    expect(DOC).toContain(`Exit codes: ${EXIT.ok} done, ${EXIT.notFound} not found (a site, table or tag HQ does not have), ${EXIT.usage} usage, ${EXIT.conflict} HQ refused the`);
    expect(DOC).toContain(`${EXIT.corruption} a damaged file, ${EXIT.io} I/O.`);
  });

  it("uses, in the engines' statements, the names HQ has", () => {
    const sql = fenced('sql').join('\n');
    expect(sql).toContain("'warehouse' = 'file:///mnt/hq'");
    expect(DOC).toContain('HQ=/mnt/hq');
    const catalog = new Catalog(hqDir);
    for (const m of [...sql.matchAll(/\b(site_\w+)\.`?(\w+)/g), ...DOC.matchAll(/hq\.(site_\w+)\.(\w+)/g)]) {
      expect(catalog.tableExists({ database: m[1]!, table: m[2]! }), m[0]).toBe(true);
    }
    const tags = catalog.getTable({ database: 'site_demo', table: 'stock' }).listTags().map((t) => t.name);
    for (const m of [...sql.matchAll(/'scan\.tag-name' = '([^']+)'/g), ...DOC.matchAll(/VERSION AS OF '([^']+)'/g)]) expect(tags).toContain(m[1]);
  });
});
