// The proposals a restored site's approval_inbox held as restored, for the write-back: only a
// module's ack of one of them can be the answer to an approval lost with the old PC (core/inbox
// write-back.ts `WriteBackOptions.restored`). Decided by the restored state, not by comparing a
// proposal's `createdAtMs` with the restore's time: a wall clock stepped back while the site runs
// (NTP) made the site's own new proposals look older than the restore, and a module's ack alone
// then approved them by "?".
//
// The restore note names approval_inbox's snapshot as restored (core/sync `RestoreNote.tables`).
// The first start within the week after the restore reads the proposals open or deferred without a
// command at that snapshot (time travel; nothing has committed the table since the restore, so it
// is there) and keeps their ids in `<data>/restored-proposals.json`, with the note's `restoredAtMs` and the
// snapshot id it was read for. Later starts within the week read that file: the snapshot itself
// expires within hours of the inbox's commits (core/lsm: an hour past the last ten), so a restart
// a day later could no longer read it. A file for another restore (its time or snapshot not the
// note's: `tilstand restore --force` again) is read anew from the snapshot. Past the week nothing
// is read: an ack decides nothing then anyway.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { APPROVAL_INBOX_TABLE, LOST_APPROVAL_ACK_WINDOW_MS, proposalsWithoutCommandAt } from '../inbox/index.ts';
import { localFileIO, type Catalog } from '../lsm/index.ts';
import type { RestoreNote } from '../sync/restore.ts';

export const RESTORED_PROPOSALS = 'restored-proposals.json';

interface Saved {
  restoredAtMs: number;
  snapshotId: number;
  proposals: string[];
}

export interface RestoredProposalsOptions {
  data: string;
  /** The restore note as the start read it; undefined: the site was never restored. */
  note: RestoreNote | undefined;
  catalog: Catalog;
  database: string;
  nowMs: number;
  log: (line: string) => void;
}

/**
 * When the site was restored (the note's `restoredAtMs`, no later than `nowMs`: a note ahead of a
 * clock stepped back since the restore opens no longer window) and the proposals its inbox held
 * then without a command; undefined when the site was never restored, or the note's time is no
 * number (a note edited by hand: as no restore). An empty set where nothing can be told: past the
 * week, a restored inbox without a snapshot (HQ had none: no proposal was made before), a note
 * that names none, or a snapshot that can no longer be read and no file kept from it (logged).
 */
export function restoredProposals(o: RestoredProposalsOptions): { atMs: number; proposals: ReadonlySet<string> } | undefined {
  const noted = o.note?.restoredAtMs;
  if (typeof noted !== 'number' || !Number.isFinite(noted)) return undefined;
  const atMs = Math.min(noted, o.nowMs);
  const none = { atMs, proposals: new Set<string>() };
  if (o.nowMs - atMs >= LOST_APPROVAL_ACK_WINDOW_MS) return none;
  const snapshotId = o.note?.tables?.[APPROVAL_INBOX_TABLE]?.snapshotId;
  if (typeof snapshotId !== 'number' || !Number.isSafeInteger(snapshotId)) return none;
  const path = join(o.data, RESTORED_PROPOSALS);
  const saved = readSaved(path);
  if (saved !== undefined && saved.restoredAtMs === noted && saved.snapshotId === snapshotId) return { atMs, proposals: new Set(saved.proposals) };
  let ids: string[];
  try {
    ids = proposalsWithoutCommandAt(o.catalog.getTable({ database: o.database, table: APPROVAL_INBOX_TABLE }), snapshotId);
  } catch (e) {
    o.log(`restore: ${APPROVAL_INBOX_TABLE} as restored (snapshot ${snapshotId}) does not read (${(e as Error).message}), and ${RESTORED_PROPOSALS} holds none of its proposals: a module's ack approves none of them`);
    return none;
  }
  const kept: Saved = { restoredAtMs: noted, snapshotId, proposals: ids };
  try {
    // Temp file, fsync, rename: a crash leaves the old file or none, never a torn one.
    localFileIO.replaceAtomic(path, Buffer.from(`${JSON.stringify(kept)}\n`));
  } catch (e) {
    o.log(`restore: ${RESTORED_PROPOSALS} not written (${(e as Error).message}); the next start reads ${APPROVAL_INBOX_TABLE}'s snapshot ${snapshotId} again while it is retained`);
  }
  return { atMs, proposals: new Set(ids) };
}

/** The file's content, or undefined when there is none or it is not one this module wrote. */
function readSaved(path: string): Saved | undefined {
  if (!existsSync(path)) return undefined;
  try {
    const v = JSON.parse(readFileSync(path, 'utf8')) as Partial<Saved> | null;
    if (v && typeof v.restoredAtMs === 'number' && typeof v.snapshotId === 'number' && Array.isArray(v.proposals) && v.proposals.every((x) => typeof x === 'string')) return v as Saved;
  } catch {
    // Not JSON (edited by hand): read from the snapshot again.
  }
  return undefined;
}
