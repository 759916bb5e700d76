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
// is there) and keeps their ids in `<data>/restored-proposals.json`, with the rule they were chosen
// by (`RULE`), the note's `restoredAtMs`, the snapshot id they were read at, and the time the week
// is counted from (`atMs`). Later starts within the week read that file: the snapshot itself
// expires within hours of the inbox's commits (core/lsm: an hour past the last ten), so a restart
// a day later could no longer read it. A file for another restore (its time or snapshot not the
// note's: `tilstand restore --force` again), or one filled by another rule, is as none: read anew
// from the snapshot. An older version kept every proposal without a command, withdrawn, rejected
// and stale ones too, and its file named no rule: trusted, it let an ack approve a withdrawn
// proposal by "?". Past the week nothing is read: an ack decides nothing then anyway.
//
// The week counts from the note's time while the clock has reached it. A clock behind the note
// counts it from the first start's time instead, which is kept, and from the kept time at every
// later start while the clock is still behind the note (or from its own clock, if that is earlier
// still): counted from each start's own clock, a clock more than a week behind the note opened the
// week anew at every start. Once the clock has reached the note (put right by NTP) the kept time no
// longer counts: a replacement PC a year behind at its first start would otherwise have closed the
// week at the next start after the fix, and a lost approval's ack a day after the restore approved
// nothing. Where nothing is kept (the note names no snapshot, or it does not read) each start
// counts from min(note, now); no ack approves by "?" then anyway.

import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { APPROVAL_INBOX_TABLE, LOST_APPROVAL_ACK_WINDOW_MS, proposalsWithoutCommandAt } from '../inbox/index.ts';
import { localFileIO, type Catalog } from '../lsm/index.ts';
import type { RestoreNote } from '../sync/restore.ts';

export const RESTORED_PROPOSALS = 'restored-proposals.json';

/**
 * The rule the kept ids were chosen by: the proposals open or deferred without a command at the
 * snapshot (`proposalsWithoutCommandAt`). A file without it (an older version's, which kept every
 * proposal without a command) or with another is read as no file.
 */
const RULE = 'open or deferred without a command';

interface Saved {
  rule: typeof RULE;
  restoredAtMs: number;
  snapshotId: number;
  /** The first start's min(the note's time, its clock): the week counts from it while the clock is behind the note. */
  atMs: number;
  proposals: string[];
}

/**
 * When the site was restored, for the write-back, and the proposals its inbox held then without a
 * command (`WriteBackOptions.restored`): 'unreadable' when they cannot be told (the snapshot does
 * not read and no file was kept from it).
 */
export type RestoredProposals = { atMs: number; proposals: ReadonlySet<string> | 'unreadable' };

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
 * When the site was restored (the note's `restoredAtMs` once the clock has reached it; while the
 * clock is behind it, the first start's clock, kept in the file so later starts count from it too,
 * or this start's if earlier: a note ahead of a clock stepped back since the restore opens no
 * longer window) and the proposals its inbox held then without a command;
 * undefined when the site was never restored, or the note's time is no number (a note edited by
 * hand: as no restore). An empty set where there is nothing to approve: past the week, or a
 * restored inbox without a snapshot (HQ had none: no proposal was made before) or a note that names
 * none. 'unreadable' where the snapshot can no longer be read and no file was kept from it (logged):
 * the write-back approves nothing by "?" then, and says it cannot tell.
 */
export function restoredProposals(o: RestoredProposalsOptions): RestoredProposals | undefined {
  const noted = o.note?.restoredAtMs;
  if (typeof noted !== 'number' || !Number.isFinite(noted)) return undefined;
  const snapshotId = o.note?.tables?.[APPROVAL_INBOX_TABLE]?.snapshotId;
  const named = typeof snapshotId === 'number' && Number.isSafeInteger(snapshotId);
  const path = join(o.data, RESTORED_PROPOSALS);
  const read = named ? readSaved(path) : undefined;
  const saved = read !== undefined && read.restoredAtMs === noted && read.snapshotId === snapshotId ? read : undefined;
  // The kept first start's time counts only while the clock is still behind the note: once it has
  // reached the note, the clock was put right, and a time kept from a clock far behind would close
  // the week early (or at once).
  const atMs = o.nowMs >= noted ? noted : saved !== undefined ? Math.min(saved.atMs, o.nowMs) : o.nowMs;
  const none = { atMs, proposals: new Set<string>() };
  if (o.nowMs - atMs >= LOST_APPROVAL_ACK_WINDOW_MS) return none;
  if (!named) return none;
  if (saved !== undefined) return { atMs, proposals: new Set(saved.proposals) };
  let ids: string[];
  try {
    ids = proposalsWithoutCommandAt(o.catalog.getTable({ database: o.database, table: APPROVAL_INBOX_TABLE }), snapshotId);
  } catch (e) {
    o.log(`restore: ${APPROVAL_INBOX_TABLE} as restored (snapshot ${snapshotId}) does not read (${(e as Error).message}), and ${RESTORED_PROPOSALS} holds none of its proposals: a module's ack approves none of them`);
    return { atMs, proposals: 'unreadable' };
  }
  const kept: Saved = { rule: RULE, restoredAtMs: noted, snapshotId, atMs, proposals: ids };
  try {
    // Temp file, fsync, rename: a crash leaves the old file or none, never a torn one.
    localFileIO.replaceAtomic(path, Buffer.from(`${JSON.stringify(kept)}\n`));
  } catch (e) {
    o.log(`restore: ${RESTORED_PROPOSALS} not written (${(e as Error).message}); the next start reads ${APPROVAL_INBOX_TABLE}'s snapshot ${snapshotId} again while it is retained`);
  }
  return { atMs, proposals: new Set(ids) };
}

/** The file's content, or undefined when there is none or it is not one this version wrote (its rule not `RULE`). */
function readSaved(path: string): Saved | undefined {
  if (!existsSync(path)) return undefined;
  try {
    const v = JSON.parse(readFileSync(path, 'utf8')) as Partial<Saved> | null;
    if (
      v &&
      v.rule === RULE &&
      typeof v.restoredAtMs === 'number' &&
      typeof v.snapshotId === 'number' &&
      typeof v.atMs === 'number' &&
      Number.isFinite(v.atMs) &&
      Array.isArray(v.proposals) &&
      v.proposals.every((x) => typeof x === 'string')
    )
      return v as Saved;
  } catch {
    // Not JSON (edited by hand): read from the snapshot again.
  }
  return undefined;
}
