// `tilstand restore --fall-back-to-tag` rolls a table whose latest snapshot at HQ is damaged back to
// its newest sound tag: what it committed after the tag is lost (core/sync restore.ts,
// `RestoreNote.restoredFromTag`). Before, only the restore's own output and restore-note.json said
// so, and whoever looked at the site later saw nothing of it. The status now carries it for a week
// after the restore (`RESTORED_FROM_TAG_SHOWN_MS`), stopped or running, `tilstand status` says it
// in a line per table, and the site API's status gives it to the floor UI's Sync screen.
import { mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalog } from '../lsm/index.ts';
import { referencedFiles } from '../sync/plan.ts';
import { readRestoreNote, type RestoreNote } from '../sync/restore.ts';
import type { RestoredFromTagView } from './api.ts';
import { runMain as cli } from './cli/test-support.ts';
import { initDataDir } from './init.ts';
import { SiteService } from './service.ts';
import { Site } from './site.ts';
import { formatStatus, RESTORED_FROM_TAG_SHOWN_MS, restoredFromTagShown, statusFromDirectory } from './status.ts';

const SCRYPT = { N: 1024, r: 8, p: 1 };
const TAG = 'hourly-2026120509';
const HOUR = 3_600_000;

let dir: string;
let data: string;
let note: RestoreNote;
let shown: RestoredFromTagView[];

/** One stock row committed with its stream's high-water mark. */
function commitStock(warehouse: string, item: string, seq: number): void {
  const w = new Catalog(warehouse).getTable({ database: 'site_north', table: 'stock' }).newWriter();
  w.writeRecord({ item, location: 'A-01', on_hand: seq, inventory_seq: BigInt(seq) });
  w.commit({ 'tilstand.hwm.inventory/stock': String(seq) });
  w.close();
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tilstand-restored-from-tag-'));
  // A site whose stock has a tag and a commit after it, shipped to HQ, where a data file only the
  // latest snapshot names is then lost: restored with --fall-back-to-tag, and set up again.
  const old = join(dir, 'old');
  await initDataDir({ data: old, site: 'north', scrypt: SCRYPT });
  const warehouse = join(old, 'warehouse');
  commitStock(warehouse, 'ITEM-1', 3);
  const stock = () => new Catalog(warehouse).getTable({ database: 'site_north', table: 'stock' });
  stock().createTag(TAG);
  await new Promise((r) => setTimeout(r, 5));
  commitStock(warehouse, 'ITEM-2', 4);
  const hq = join(dir, 'hq');
  expect((await cli(['sync', 'now', '--data', old, '--hq', hq])).code).toBe(0);
  const t = stock();
  const inTag = new Set(referencedFiles(t, t.tags.get(TAG).snapshot).map((f) => f.rel));
  const lost = referencedFiles(t, t.latestSnapshot()!).find((f) => f.rel.startsWith('bucket-') && !inTag.has(f.rel))!;
  unlinkSync(join(hq, 'site_north.db', 'stock', ...lost.rel.split('/')));
  data = join(dir, 'fresh');
  const r = await cli(['restore', '--data', data, '--hq', hq, '--site', 'north', '--fall-back-to-tag']);
  expect(r.code, r.err).toBe(4);
  expect((await cli(['init', '--data', data, '--site', 'north', '--admin', 'ada', '--pin', '2468'])).code).toBe(0);
  note = readRestoreNote(data)!;
  const f = note.restoredFromTag![0]!;
  expect(f.table).toBe('stock');
  shown = [
    {
      table: 'stock',
      tag: TAG,
      snapshotId: f.snapshotId,
      committedMs: f.committedMs,
      damagedSnapshotId: f.damagedSnapshotId,
      damagedCommittedMs: f.damagedCommittedMs,
      lostMs: f.lostMs,
      error: f.error,
      restoredAtMs: note.restoredAtMs,
    },
  ];
}, 120_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
/** `tilstand status`'s line for stock as restored. */
const line = (): string => {
  const f = shown[0]!;
  return (
    `restored from an older tag: stock, from tag ${TAG} (committed ${iso(f.committedMs)}) by the restore at ${iso(note.restoredAtMs)}, ` +
    `because HQ's latest snapshot ${f.damagedSnapshotId} of it was damaged: in the ${f.lostMs}ms from the tag up to that snapshot (committed ${iso(f.damagedCommittedMs)}), ` +
    'what stock committed then is lost, but for what its modules resent after the tag'
  );
};

describe('a site restored from an older tag says so', () => {
  it('a stopped site: the status has the table, the tag and the time lost, and `tilstand status` a line saying what was lost and why', () => {
    const s = statusFromDirectory(data, note.restoredAtMs + HOUR);
    expect(s.restoredFromTag).toEqual(shown);
    expect(formatStatus(s)).toContain(line());
  });

  it('for a week after the restore; then nothing (restore-note.json keeps it)', () => {
    expect(statusFromDirectory(data, note.restoredAtMs + RESTORED_FROM_TAG_SHOWN_MS - 1).restoredFromTag).toEqual(shown);
    const later = statusFromDirectory(data, note.restoredAtMs + RESTORED_FROM_TAG_SHOWN_MS);
    expect(later.restoredFromTag).toBeUndefined();
    expect(formatStatus(later).some((l) => l.includes('older tag'))).toBe(false);
    expect(readRestoreNote(data)!.restoredFromTag).toHaveLength(1);
  });

  it('a note whose restoredAtMs is no number (edited by hand, torn): nothing said, and `tilstand status` does not fail', () => {
    // Before, shown for good (no week could pass) with no time, and `tilstand status` threw
    // "Invalid time value" writing the restore's time.
    const s = statusFromDirectory(data, note.restoredAtMs + HOUR);
    for (const odd of [undefined, 'yesterday', Number.NaN]) {
      const shownOdd = restoredFromTagShown({ ...note, restoredAtMs: odd } as unknown as RestoreNote, note.restoredAtMs + HOUR);
      expect(shownOdd, String(odd)).toEqual([]);
      expect(() => formatStatus({ ...s, restoredFromTag: shownOdd })).not.toThrow();
    }
  });

  it('a site that was not restored, or restored without a fall-back: nothing', async () => {
    const plain = join(dir, 'plain');
    await initDataDir({ data: plain, site: 'plain', scrypt: SCRYPT });
    const s = statusFromDirectory(plain);
    expect(s.restoredFromTag).toBeUndefined();
    expect(formatStatus(s).some((l) => l.includes('older tag'))).toBe(false);
  }, 30_000);

  it('`tilstand status`, as text and --json', async () => {
    // The restore ran a moment ago: within the week by the real clock.
    const text = await cli(['status', '--data', data]);
    expect(text.code, text.err).toBe(0);
    expect(text.out).toContain(`${line()}\n`);
    const json = await cli(['status', '--data', data, '--json']);
    expect(JSON.parse(json.out).restoredFromTag).toEqual(shown);
  }, 30_000);

  it('a running site: in its status (the control socket) and in the site API status the floor UI gets, for the week', async () => {
    const site = await Site.start({ data, mqttPort: 0, httpPort: 0, ui: false, agentTimer: false });
    try {
      expect(site.status().restoredFromTag).toEqual(shown);
      expect(new SiteService(site, { now: () => note.restoredAtMs + HOUR }).status().restoredFromTag).toEqual(shown);
      expect(new SiteService(site, { now: () => note.restoredAtMs + RESTORED_FROM_TAG_SHOWN_MS }).status().restoredFromTag).toBeUndefined();
    } finally {
      await site.stop();
    }
  }, 60_000);
});
