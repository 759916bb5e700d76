// `tilstand restore` when HQ's latest snapshot of a table is damaged (a data file it names lost at
// HQ) while an older tag of the table is sound. Refused without `--fall-back-to-tag` (exit 4, the
// unfinished mark kept), the refusal naming the option, the tag it would restore from and what
// would be lost. With it, the table is restored at that tag (LATEST = the tag's snapshot, as a
// destructive rollback leaves a table), the note and the output name the table, the tag, the
// damaged snapshot and the time lost, the modules are asked to resend from the tag's high-water
// marks (from the state restored, not the damaged latest's), exit 4 naming the damage; the site is
// usable: `tilstand init` works, and its first sync replaces HQ's damaged latest.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, rmSync, unlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Catalog, RowKind } from '../../lsm/index.ts';
import { runCli } from '../../lsm/testing/cli.ts';
import { referencedFiles } from '../plan.ts';
import { readRestoreNote, RESTORE_UNFINISHED } from '../restore.ts';
import { makeSite, scanSorted, tempDir, writeStock } from '../test-support/site-fixture.ts';
import { shipToDirectory } from '../test-support/ship.ts';
import { runRestore } from './sync.ts';

const cleanup: string[] = [];
afterAll(() => {
  for (const d of cleanup) rmSync(d, { recursive: true, force: true });
});

async function tilstand(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  const child = spawn(process.execPath, [resolve('bin/tilstand.mjs'), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString()));
  child.stderr.on('data', (b: Buffer) => (err += b.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const code = await new Promise<number | null>((r) => child.on('close', r));
  clearTimeout(timer);
  return { code, out, err };
}

describe("tilstand restore when HQ's latest snapshot of a table is damaged", () => {
  it('refused without --fall-back-to-tag; with it, the table comes back at its newest sound tag, the loss named, the resync from the tag', { timeout: 180_000 }, async () => {
    const fx = makeSite('rdx', { rows: 5 });
    const hqDir = tempDir('hq');
    const data = tempDir('restored');
    cleanup.push(fx.data, hqDir, data);
    const stock = fx.table('stock');
    writeStock(fx, 5, 10, 2);
    stock.createTag('hourly-2026120509');
    const tagged = stock.tags.get('hourly-2026120509').snapshot;
    await new Promise((r) => setTimeout(r, 5));
    writeStock(fx, 10, 15, 3);
    // A stream whose first event stock took after the tag: the tag's snapshot has no mark of it.
    const w = stock.newWriter();
    w.write(['item-late', 'loc-9', 1, 'late'], RowKind.INSERT);
    w.commit({ 'tilstand.hwm.yard/late': '7' });
    w.close();
    writeStock(fx, 2000, 2010, 4);
    const latest = stock.latestSnapshot()!;
    await shipToDirectory(fx.data, fx.site, hqDir);
    // A data file of the latest snapshot that the tag does not name, lost at HQ.
    const inTag = new Set(referencedFiles(stock, tagged).map((f) => f.rel));
    const lost = referencedFiles(stock, latest).find((f) => f.rel.startsWith('bucket-') && !inTag.has(f.rel))!;
    expect(lost).toBeDefined();
    const lostAtHq = join(hqDir, 'site_rdx.db', 'stock', ...lost.rel.split('/'));
    unlinkSync(lostAtHq);

    // Without the option: refused, naming the damage, the option, the tag and what it would lose.
    const refused = await runCli(runRestore, ['--data', data, '--hq', hqDir, '--site', 'rdx']);
    expect([refused.code, refused.out]).toEqual([4, '']);
    expect(refused.err).toContain(lost.rel);
    expect(refused.err).toContain(join(hqDir, 'site_rdx.db', 'stock', 'snapshot', `snapshot-${latest.id}`));
    expect(refused.err).toContain('--fall-back-to-tag');
    expect(refused.err).toContain(`tag hourly-2026120509 (snapshot ${tagged.id}`);
    expect(refused.err).toMatch(/lost/);
    expect(existsSync(join(data, RESTORE_UNFINISHED))).toBe(true);
    expect(existsSync(join(data, 'restore-note.json'))).toBe(false);

    // With it (the rerun redoes the half copy): stock at the tag, the inbox tables at their latest.
    const r = await runCli(runRestore, ['--data', data, '--hq', hqDir, '--site', 'rdx', '--fall-back-to-tag']);
    expect(r.code, r.err).toBe(4);
    expect(r.out).toContain('restored site rdx');
    expect(r.out).toContain(`stock@${tagged.id}`);
    expect(r.out).toContain(`stock: HQ's latest snapshot ${latest.id} is damaged; restored from tag hourly-2026120509 (snapshot ${tagged.id}`);
    expect(r.out).toMatch(/lost: what stock committed after the tag/);
    // The resend marks are the tag's (hwm 2), not the damaged latest's (4).
    expect(r.out).toContain('resync inventory/stock after seq 2 ');
    expect(r.out).toContain('resync commerce/reservations after seq 20 ');
    expect(r.out).toContain('resync yard/late after seq 0 ');
    expect(r.err).toMatch(/(^|[\r\n])tilstand: 1 table at HQ had a damaged latest snapshot and was restored from an older tag: stock: .*; the restored site is usable\n$/);
    expect(r.err).toContain(lost.rel);
    expect(existsSync(join(data, RESTORE_UNFINISHED))).toBe(false);

    const t = new Catalog(join(data, 'warehouse')).getTable({ database: 'site_rdx', table: 'stock' });
    expect(t.latestSnapshot()!.id).toBe(tagged.id);
    expect(t.snapshots.earliestId()).toBe(tagged.id);
    expect(scanSorted(t)).toEqual(scanSorted(stock, { tag: 'hourly-2026120509' }));
    expect(t.listTags().map((x) => x.name)).toEqual(['hourly-2026120509']);
    const note = readRestoreNote(data)!;
    expect(note.tables.stock).toEqual({ snapshotId: tagged.id, tags: ['hourly-2026120509'] });
    expect(note.restoredFromTag).toEqual([
      {
        table: 'stock',
        tag: 'hourly-2026120509',
        snapshotId: tagged.id,
        committedMs: tagged.timeMillis,
        damagedSnapshotId: latest.id,
        damagedCommittedMs: latest.timeMillis,
        lostMs: latest.timeMillis - tagged.timeMillis,
        key: `site_rdx.db/stock/snapshot/snapshot-${latest.id}`,
        error: expect.stringContaining(lost.rel) as unknown as string,
      },
    ]);
    const resync = Object.fromEntries(note.resync.map((x) => [`${x.module}/${x.stream}`, x.afterSeq]));
    // yard/late: every event again (the restored stock has none of them), not left out.
    expect(resync).toEqual({ 'inventory/stock': 2, 'commerce/reservations': 20, 'agents/proposals': 5, 'yard/late': 0 });
    expect(note.resync.find((x) => x.stream === 'late')?.tables).toEqual({ stock: 0 });
    expect(note.sender?.adopted).toBe(true);
    expect(JSON.parse(readFileSync(join(data, 'restore-note.json'), 'utf8')).restoredFromTag).toHaveLength(1);

    // The restored site is one: its first sync makes HQ's latest the restored state, and init works.
    await shipToDirectory(data, 'rdx', hqDir);
    expect(readFileSync(join(hqDir, 'site_rdx.db', 'stock', 'snapshot', 'LATEST'), 'utf8')).toBe(String(tagged.id));
    expect(existsSync(join(hqDir, 'site_rdx.db', 'stock', 'snapshot', `snapshot-${latest.id}`))).toBe(false);
    // The fixture's contract file is a stand-in (name and version only), which init would refuse.
    rmSync(join(data, 'contracts', 'inventory.stock'), { recursive: true, force: true });
    const init = await tilstand(['init', '--data', data, '--site', 'rdx']);
    expect(init.code, init.err + init.out).toBe(0);
  });

  it('a damaged latest with no sound tag to fall back to: refused with the option too, saying so', { timeout: 60_000 }, async () => {
    const fx = makeSite('rdn', { rows: 5 });
    const hqDir = tempDir('hq');
    const data = tempDir('restored');
    cleanup.push(fx.data, hqDir, data);
    await shipToDirectory(fx.data, fx.site, hqDir);
    const list = fx.table('stock').latestSnapshot()!.baseManifestList;
    unlinkSync(join(hqDir, 'site_rdn.db', 'stock', 'manifest', list));
    const r = await runCli(runRestore, ['--data', data, '--hq', hqDir, '--site', 'rdn', '--fall-back-to-tag']);
    expect([r.code, r.out]).toEqual([4, '']);
    expect(r.err).toContain(list);
    expect(r.err).toContain('stock has no sound tag at HQ to fall back to');
    expect(existsSync(join(data, RESTORE_UNFINISHED))).toBe(true);
    // Without the option the refusal does not offer it: it could not help.
    const plain = await runCli(runRestore, ['--data', data, '--hq', hqDir, '--site', 'rdn']);
    expect([plain.code, plain.out]).toEqual([4, '']);
    expect(plain.err).toContain('stock has no sound tag at HQ to fall back to');
    expect(plain.err).not.toContain('--fall-back-to-tag');
  });
});
