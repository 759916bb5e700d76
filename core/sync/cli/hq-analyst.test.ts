// What an analyst at HQ gets from `tilstand hq …` on what a site shipped: HQ holds each table's
// latest synced snapshot alone and every tag, so a read at a time or at a snapshot id finds the
// tag that holds that state; `hq diff --format csv` writes the row kinds as they are; `hq
// proposals --format text` names the tag HQ holds of each proposal's evidence and of the state its
// approval was checked against; `hq tags` says what its record count counts.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentColumns, APPROVAL_INBOX_TABLE, decisionColumns, type EvidenceTable, type InboxRow } from '../../inbox/index.ts';
import { runCli } from '../../lsm/testing/cli.ts';
import { makeSite, writeStock, type SiteFixture } from '../test-support/site-fixture.ts';
import { shipToDirectory } from '../test-support/ship.ts';
import { runHq } from './hq.ts';

const dir = mkdtempSync(join(tmpdir(), 'tilstand-hq-analyst-'));
const hqDir = join(dir, 'hq');
const hq = (...args: string[]) => runCli((argv, io) => runHq(argv, io), [args[0]!, '--hq', hqDir, ...args.slice(1)]);
let fx: SiteFixture;
/** Snapshot id and commit time of each tag, on the site. */
const tagged = new Map<string, { id: number; ms: number }>();

/** Waits for the clock's next millisecond, so two commits have different times (bounded: 1 ms). */
function nextMs(): void {
  const t = Date.now();
  for (let i = 0; i < 1e8 && Date.now() === t; i++);
}

/**
 * A proposal row citing `evidence`, decided by lead-anna when `decided` (approved unless said),
 * its approval checked against the snapshots `checked`.
 */
function proposal(id: string, atMs: number, evidence: EvidenceTable[], decided: boolean, o: { kind?: 'approved' | 'rejected' | 'stale'; checked?: Record<string, number | null> } = {}): InboxRow {
  const input = { situationKey: `s|${id}`, ruleId: 'move', ruleVersion: '1', action: 'move_item', module: 'inventory', params: { item: 'item-1' }, risk: 'low' as const, riskReason: 'test', explanation: `move for ${id}`, evidence, runId: `run-${id}` };
  const r: InboxRow = { ...agentColumns(id, input, atMs, 'open', null, atMs), agent_seq: 1n };
  const kind = o.kind ?? 'approved';
  const decision = { kind, by: 'lead-anna', role: 'shift_lead', atMs: atMs + 1, comment: null, snapshots: { seen: {}, checked: o.checked ?? {} }, reason: kind === 'stale' ? 'moved on' : null };
  return decided ? { ...r, ...decisionColumns(decision), decision_seq: 1n } : r;
}

beforeAll(async () => {
  fx = makeSite('7', { rows: 5 });
  const stock = fx.table('stock');
  const tag = (name: string) => {
    const s = stock.latestSnapshot()!;
    stock.createTag(name);
    tagged.set(name, { id: s.id, ms: s.timeMillis });
  };
  // Three states of stock: two tagged (as the hourly and the agent's run tags are), then the latest.
  tag('hourly-a');
  tag('agent-run-1');
  tag('decision-p-decided');
  nextMs();
  writeStock(fx, 5, 8, 2);
  tag('hourly-b');
  nextMs();
  writeStock(fx, 8, 10, 3);
  // The state two approvals were checked against, the latest (as core/inbox keepChecked tags it);
  // p-stale's on resources too, a table HQ has not got.
  const latest = stock.latestSnapshot()!.id;
  tag('checked-p-decided');
  tag('checked-p-stale');
  const ev = (t: string | null): EvidenceTable[] => [{ table: 'stock', snapshotId: tagged.get('hourly-a')!.id, tag: t, rows: [] }];
  const w = fx.table(APPROVAL_INBOX_TABLE).newWriter();
  try {
    const t0 = Date.UTC(2026, 2, 5, 10);
    w.writeRecord(proposal('p-decided', t0 + 1, ev('agent-run-1'), true, { checked: { stock: latest } }));
    w.writeRecord(proposal('p-rejected', t0 + 5, ev('agent-run-1'), true, { kind: 'rejected' }));
    w.writeRecord(proposal('p-stale', t0 + 6, ev('agent-run-1'), true, { kind: 'stale', checked: { stock: latest, resources: 4, work_queue: null } }));
    // Approved before the site tagged what it checked: HQ has the snapshot ids only.
    w.writeRecord(proposal('p-untagged', t0 + 7, ev('agent-run-1'), true, { checked: { stock: latest } }));
    w.writeRecord(proposal('p-open', t0 + 2, ev('agent-run-1'), false));
    w.writeRecord(proposal('p-expired', t0 + 3, ev('agent-run-gone'), false));
    w.writeRecord(proposal('p-none', t0 + 4, [], false));
    w.commit();
  } finally {
    w.close();
  }
  await shipToDirectory(fx.data, fx.site, hqDir);
}, 60_000);
afterAll(() => {
  rmSync(fx.data, { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
});

describe('tilstand hq scan/export at a time or a snapshot id', () => {
  it('reads the newest tag at or before --at, and says which on stderr (was exit 1: no snapshot that old)', async () => {
    const a = tagged.get('hourly-a')!;
    const b = tagged.get('hourly-b')!;
    expect(b.ms).toBeGreaterThan(a.ms);
    const atTag = await hq('scan', '--site', '7', '--table', 'stock', '--tag', 'hourly-b');
    expect(atTag.out.trim().split('\n')).toHaveLength(8);
    const at = await hq('scan', '--site', '7', '--table', 'stock', '--at', String(b.ms));
    expect([at.code, at.out]).toEqual([0, atTag.out]);
    const iso = (ms: number) => new Date(ms).toISOString();
    expect(at.err).toBe(`tilstand: --at ${iso(b.ms)}: reading tag hourly-b (snapshot ${b.id}, committed ${iso(b.ms)}), the newest state HQ holds at or before that time\n`);
    // The committed time it names, pasted into --at, reads the same state again.
    const committed = /committed (\S+)\)/.exec(at.err)![1]!;
    const again = await hq('scan', '--site', '7', '--table', 'stock', '--at', committed);
    expect([again.code, again.out]).toEqual([0, atTag.out]);
    // Between the two tags: the older one (of the three tags on that snapshot, the first listed).
    const between = await hq('scan', '--site', '7', '--table', 'stock', '--at', new Date(b.ms - 1).toISOString());
    expect([between.code, between.out]).toEqual([0, (await hq('scan', '--site', '7', '--table', 'stock', '--tag', 'hourly-a')).out]);
    expect(between.err).toMatch(/reading tag (agent-run-1|decision-p-decided|hourly-a) \(snapshot \d+,/);
    // After the latest synced snapshot: the latest, said as such.
    const now = await hq('scan', '--site', '7', '--table', 'stock', '--at', String(Date.now() + 60_000));
    expect([now.code, now.out]).toEqual([0, (await hq('scan', '--site', '7', '--table', 'stock')).out]);
    expect(now.err).toMatch(/^tilstand: --at .*: reading the latest synced snapshot \(snapshot \d+, committed .*\), the newest state HQ holds at or before that time\n$/);
    // Before every tag: still not found, saying HQ has nothing that old.
    const before = await hq('scan', '--site', '7', '--table', 'stock', '--at', String(a.ms - 1));
    expect([before.code, before.out]).toEqual([1, '']);
    expect(before.err).toMatch(/no snapshot of site_7\.stock at or before .*; HQ keeps the latest synced snapshot and the tags, and none of them is that old/);
    // hq export reads the same state.
    const csvAt = join(dir, 'at.csv');
    const csvTag = join(dir, 'tag.csv');
    expect((await hq('export', '--site', '7', '--table', 'stock', '--at', String(b.ms), '--format', 'csv', '--out', csvAt)).code).toBe(0);
    expect((await hq('export', '--site', '7', '--table', 'stock', '--tag', 'hourly-b', '--format', 'csv', '--out', csvTag)).code).toBe(0);
    expect(readFileSync(csvAt, 'utf8')).toBe(readFileSync(csvTag, 'utf8'));
  });

  it('reads a --snapshot HQ holds only as a tag from that tag (was exit 1: snapshot does not exist)', async () => {
    const b = tagged.get('hourly-b')!;
    const r = await hq('scan', '--site', '7', '--table', 'stock', '--snapshot', String(b.id));
    expect([r.code, r.err, r.out]).toEqual([0, '', (await hq('scan', '--site', '7', '--table', 'stock', '--tag', 'hourly-b')).out]);
    // A snapshot neither kept nor tagged is still not found.
    expect((await hq('scan', '--site', '7', '--table', 'stock', '--snapshot', '999')).code).toBe(1);
  });
});

describe('tilstand hq diff --format csv', () => {
  it("writes the row kinds as the JSON lines do (+I, -U, +U, -D), not guarded as formulas ('+I)", async () => {
    const csv = await hq('diff', '--site', '7', '--table', 'stock', '--from', 'hourly-a', '--to', 'hourly-b', '--format', 'csv');
    const jsonl = await hq('diff', '--site', '7', '--table', 'stock', '--from', 'hourly-a', '--to', 'hourly-b');
    expect([csv.code, jsonl.code]).toEqual([0, 0]);
    const kinds = jsonl.out.trim().split('\n').map((l) => (JSON.parse(l) as { _kind: string })._kind);
    expect(kinds).toEqual(['+I', '+I', '+I']);
    const lines = csv.out.trim().split('\n');
    expect(lines[0]).toBe('_kind,item,location,qty,note');
    expect(lines.slice(1).map((l) => l.split(',')[0])).toEqual(kinds);
  });
});

describe('tilstand hq proposals --format text', () => {
  /** Reads `hq proposals --format text`: the value in column `name` of proposal `id`'s line. */
  async function proposalColumns(): Promise<{ header: string; cell: (name: string, id: string) => string | undefined }> {
    const r = await hq('proposals', '--site', '7', '--format', 'text');
    expect(r.code, r.err).toBe(0);
    const lines = r.out.trimEnd().split('\n');
    return { header: lines[0]!, cell: (name, id) => lines.find((l) => l.startsWith(`${id} `))!.slice(lines[0]!.indexOf(name)).split(/ {2,}/)[0] };
  }

  it('names the tag HQ holds of each proposal\'s evidence: decision (its decision-<id>) once decided, else the run tag, else "rows only"', async () => {
    const { header, cell } = await proposalColumns();
    expect(header).toMatch(/^proposal +status +created +risk +action +decided by +command +evidence at HQ +checked at HQ +why$/);
    const evidence = (id: string) => cell('evidence at HQ', id);
    expect(evidence('p-decided')).toBe('decision (stock)');
    expect(evidence('p-open')).toBe('agent-run-1 (stock)');
    expect(evidence('p-expired')).toBe('rows only');
    expect(evidence('p-none')).toBe('–');
  });

  it('says whether HQ holds the state an approved or stale proposal was checked against (its checked-<id> tag); "ids only" when not, "–" when nothing was checked', async () => {
    const { header, cell } = await proposalColumns();
    expect(header).toContain(' checked at HQ ');
    const checked = (id: string) => cell('checked at HQ', id);
    // On every table it checked that had a snapshot: the tag's name, for `hq scan --tag`.
    expect(checked('p-decided')).toBe('checked');
    // A stale approval checked too; HQ has the tag on stock, not on resources: the tables that have it.
    expect(checked('p-stale')).toBe('checked (stock)');
    expect(checked('p-untagged')).toBe('ids only');
    // A rejection, an open proposal: no approval checked anything.
    for (const id of ['p-rejected', 'p-open', 'p-expired', 'p-none']) expect(checked(id), id).toBe('–');
    // The evidence column is as before: the rejected proposal's run tag.
    expect(cell('evidence at HQ', 'p-rejected')).toBe('agent-run-1 (stock)');
  });

  it("names a proposal's own tags by their kind on its line and spells the names once below the table", async () => {
    const r = await hq('proposals', '--site', '7', '--format', 'text');
    const lines = r.out.trimEnd().split('\n');
    expect(lines.at(-1)).toBe("decision, checked: the proposal's tags decision-<proposal> and checked-<proposal> (tilstand hq scan --tag)");
    // No line repeats its proposal's id in a tag name (real ids are 24 characters: three of them made ~320-character lines).
    for (const l of lines.slice(1, -1)) expect(l, l).not.toMatch(/(decision|checked)-p-/);
    // The names it spells read those tags.
    for (const tag of ['decision-p-decided', 'checked-p-decided']) expect((await hq('scan', '--site', '7', '--table', 'stock', '--tag', tag)).code, tag).toBe(0);
    // Only open proposals: nothing decided, nothing checked, no line to explain them.
    const open = await hq('proposals', '--site', '7', '--format', 'text', '--status', 'open');
    expect(open.out).not.toContain('decision, checked:');
  });
});

describe('tilstand hq tags', () => {
  it('calls its count what it is: the records in the snapshot\'s files, not the rows a scan returns', async () => {
    const r = await hq('tags', '--site', '7', '--table', 'stock');
    expect(r.code).toBe(0);
    expect(r.out.split('\n')[0]).toMatch(/^NAME +SNAPSHOT +SNAPSHOT TIME +FILE RECORDS$/);
  });

  it('prints each snapshot time to the millisecond, so `hq scan --at` with it reads that snapshot; its JSON the milliseconds', async () => {
    const r = await hq('tags', '--site', '7', '--table', 'stock');
    expect(r.code, r.err).toBe(0);
    const rows = r.out.trimEnd().split('\n').slice(1).map((l) => l.split(/ {2,}/));
    expect(rows.map((c) => c[0]).sort()).toEqual([...tagged.keys()].sort());
    for (const c of rows) {
      expect(c[2], c[0]).toBe(new Date(tagged.get(c[0]!)!.ms).toISOString());
      // The time as printed, copied into --at: that snapshot, not the one before (a time cut to
      // the second read the state before a commit made later in that second).
      const at = await hq('scan', '--site', '7', '--table', 'stock', '--at', c[2]!);
      expect(at.code, at.err).toBe(0);
      expect(at.err).toContain(`(snapshot ${tagged.get(c[0]!)!.id}, committed`);
    }
    const json = JSON.parse((await hq('tags', '--site', '7', '--table', 'stock', '--json')).out) as Array<{ name: string; snapshotId: number; timeMillis: number }>;
    expect(json).toHaveLength(tagged.size);
    for (const t of json) expect(t).toEqual({ name: t.name, snapshotId: tagged.get(t.name)!.id, timeMillis: tagged.get(t.name)!.ms });
  });
});
