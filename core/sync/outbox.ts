// The sync outbox: table `sync_outbox` in `<data>/site.db` (better-sqlite3, WAL, synchronous=FULL,
// own connection). One row per step of a unit (a table's snapshot, a tag, the contracts, a run tag
// to remove at HQ): files, then the pointer, then hints and cleanup. A row turns `done` in the
// same transaction that records its bytes, after the target verified it — so after kill -9 the
// outbox says exactly which steps finished, and the step in flight is re-checked with `head`
// before it is re-sent.
//
// Columns: unit (e.g. `snapshot:stock:12`), phase (plan.ts), op (put | pointer | prune |
// release | remove), src (local file), body (pointer bytes captured at plan time), key (target
// key), size, sha256/md5 (computed on first send), priority (0 = proposals and decisions first),
// state (pending | done | cancelled), attempts, next_attempt_ms, last_error, created_ms,
// done_ms, sent_bytes (0 when HQ already had it), behind_ms (health's start of the wait when it is
// earlier than created_ms: a snapshot unit that superseded one whose pointer had not reached HQ
// carries when that one's wait began, as HQ's copy of the table has been behind since then).
// `sync_state` holds small facts other processes read (`sync status` from the CLI).

import Database from 'better-sqlite3';

export type OutboxOp = 'put' | 'pointer' | 'prune' | 'release' | 'remove';
export type OutboxState = 'pending' | 'done' | 'cancelled';

export interface OutboxRow {
  id: number;
  unit: string;
  table_name: string | null;
  phase: number;
  op: OutboxOp;
  src: string | null;
  body: Buffer | null;
  key: string | null;
  size: number;
  sha256: string | null;
  md5: string | null;
  priority: number;
  state: OutboxState;
  attempts: number;
  next_attempt_ms: number;
  last_error: string | null;
  created_ms: number;
  done_ms: number | null;
  sent_bytes: number;
  /** Null unless the unit superseded a pending one: then when HQ's copy first fell behind. */
  behind_ms: number | null;
}

/**
 * `p`: the unit's pending steps; `d`: its done steps, or 0 when a pointer step (phase 3, plan.ts
 * PHASE.pointer) of it was cancelled and none is done: that version never reached HQ.
 */
const UNIT_STATE_SUMS = `SUM(state = 'pending') AS p,
  CASE WHEN SUM(op = 'pointer' AND phase = 3 AND state = 'cancelled') > 0 AND SUM(op = 'pointer' AND phase = 3 AND state = 'done') = 0 THEN 0 ELSE SUM(state = 'done') END AS d`;

/** A unit dropped rather than sent (a tag deleted on the site before it reached HQ), for `sync status`. */
export interface DroppedUnit {
  unit: string;
  /** Why, as the unit's cancelled rows say it (`last_error`). */
  why: string;
  atMs: number;
}

/** `sync_state` key of the units dropped lately, newest last, at most DROPPED_KEPT. */
const DROPPED = 'dropped';
const DROPPED_KEPT = 20;

export type NewRow = Pick<OutboxRow, 'unit' | 'phase' | 'op' | 'priority'> & Partial<Pick<OutboxRow, 'table_name' | 'src' | 'body' | 'key' | 'size' | 'sha256' | 'md5' | 'behind_ms'>>;

/** The steps' table; `name` differs only while an older table is rebuilt (ensureOutboxSchema). */
const outboxTable = (name: string) => `
CREATE TABLE IF NOT EXISTS ${name} (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  unit TEXT NOT NULL,
  table_name TEXT,
  phase INTEGER NOT NULL,
  op TEXT NOT NULL CHECK (op IN ('put', 'pointer', 'prune', 'release', 'remove')),
  src TEXT,
  body BLOB,
  key TEXT,
  size INTEGER NOT NULL DEFAULT 0,
  sha256 TEXT,
  md5 TEXT,
  priority INTEGER NOT NULL,
  state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'done', 'cancelled')),
  attempts INTEGER NOT NULL DEFAULT 0,
  next_attempt_ms INTEGER NOT NULL DEFAULT 0,
  last_error TEXT,
  created_ms INTEGER NOT NULL,
  done_ms INTEGER,
  sent_bytes INTEGER NOT NULL DEFAULT 0,
  behind_ms INTEGER
);`;

const SCHEMA = `${outboxTable('sync_outbox')}
CREATE INDEX IF NOT EXISTS sync_outbox_pending ON sync_outbox (state, priority, id);
CREATE INDEX IF NOT EXISTS sync_outbox_key ON sync_outbox (key, state);
CREATE INDEX IF NOT EXISTS sync_outbox_unit ON sync_outbox (unit, phase, state);
CREATE INDEX IF NOT EXISTS sync_outbox_done ON sync_outbox (done_ms) WHERE state = 'done';
CREATE TABLE IF NOT EXISTS sync_state (k TEXT PRIMARY KEY, v TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS sync_at_hq (key TEXT PRIMARY KEY, size INTEGER NOT NULL, src TEXT) WITHOUT ROWID;
`;

export function openOutboxDb(path: string, readonly = false): Database.Database {
  const db = new Database(path, { readonly, fileMustExist: readonly });
  db.pragma('busy_timeout = 5000');
  if (!readonly) {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    ensureOutboxSchema(db);
  }
  return db;
}

/**
 * The outbox in a database opened read-only (a stopped site's site.db, read by `status` and
 * `sync status`), or undefined when the site has never synced: a reader does not create it.
 */
export function existingOutbox(db: Database.Database): Outbox | undefined {
  const has = db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sync_state'`).get() !== undefined;
  return has ? new Outbox(db) : undefined;
}

export function ensureOutboxSchema(db: Database.Database): void {
  db.exec(SCHEMA);
  // An outbox from before behind_ms: the column is added (last, where the definition has it, so
  // the rebuild below copies rows column for column); its rows keep null, health's old reading.
  if (!hasColumn(db, 'behind_ms')) db.exec('ALTER TABLE sync_outbox ADD COLUMN behind_ms INTEGER');
  // An outbox from before `remove` steps: its CHECK refuses them, and SQLite cannot alter a CHECK,
  // so the table is rebuilt once with every row (ids kept).
  const sql = db.prepare(`SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'sync_outbox'`).pluck().get() as string;
  if (!sql.includes("'remove'")) {
    db.transaction(() => {
      db.exec(`${outboxTable('sync_outbox_rebuilt')}
        INSERT INTO sync_outbox_rebuilt SELECT * FROM sync_outbox;
        DROP TABLE sync_outbox;
        ALTER TABLE sync_outbox_rebuilt RENAME TO sync_outbox;
        ${SCHEMA}`);
    })();
  }
  // An outbox from before sync_at_hq: what its finished file steps say HQ has, once.
  db.transaction(() => {
    if (db.prepare(`SELECT 1 FROM sync_state WHERE k = 'atHqFilled'`).get() !== undefined) return;
    db.exec(`INSERT OR REPLACE INTO sync_at_hq (key, size, src) SELECT key, size, src FROM sync_outbox WHERE op = 'put' AND state = 'done' AND key IS NOT NULL ORDER BY id`);
    db.prepare(`INSERT INTO sync_state (k, v) VALUES ('atHqFilled', '1')`).run();
  })();
}

function hasColumn(db: Database.Database, column: string): boolean {
  return db.prepare(`SELECT 1 FROM pragma_table_info('sync_outbox') WHERE name = ?`).get(column) !== undefined;
}

/**
 * The unit names that start with `prefix` as a range [prefix, prefix's successor), for the unit
 * index: LIKE is case-insensitive (it would also match another table whose name differs only in
 * case), so SQLite cannot use that index for it.
 */
function prefixRange(prefix: string): [string, string] {
  return [prefix, prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1)];
}

export class Outbox {
  /** Whether sync_outbox has behind_ms: not one an older version wrote, read here read-only (`sync status`). */
  private behindColumn: boolean | undefined;
  constructor(readonly db: Database.Database) {}

  add(rows: readonly NewRow[], nowMs: number): void {
    const ins = this.db.prepare(
      'INSERT INTO sync_outbox (unit, table_name, phase, op, src, body, key, size, sha256, md5, priority, created_ms, behind_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
    );
    this.db.transaction(() => {
      for (const r of rows) {
        ins.run(r.unit, r.table_name ?? null, r.phase, r.op, r.src ?? null, r.body ?? null, r.key ?? null, r.size ?? 0, r.sha256 ?? null, r.md5 ?? null, r.priority, nowMs, r.behind_ms ?? null);
      }
    })();
  }

  /**
   * The next step that may run: pending, due, and every step of a lower phase in its unit done.
   * Ordered by priority, then by age.
   */
  next(nowMs: number): OutboxRow | undefined {
    return this.db
      .prepare(
        `SELECT * FROM sync_outbox o WHERE o.state = 'pending' AND o.next_attempt_ms <= ?
           AND NOT EXISTS (SELECT 1 FROM sync_outbox p WHERE p.unit = o.unit AND p.phase < o.phase AND p.state = 'pending')
         ORDER BY o.priority, o.id LIMIT 1`,
      )
      .get(nowMs) as OutboxRow | undefined;
  }

  /**
   * Brings every pending step scheduled later than `latestMs` back to `latestMs`; returns how many
   * moved. A retry is never scheduled further ahead than the longest backoff, so such a step can
   * only come from a clock that stepped back (an NTP correction after a boot with a wrong clock).
   */
  clampRetries(latestMs: number): number {
    return this.db.prepare(`UPDATE sync_outbox SET next_attempt_ms = ? WHERE state = 'pending' AND next_attempt_ms > ?`).run(latestMs, latestMs).changes;
  }

  /**
   * Brings every time the outbox holds from after `nowMs` back to `nowMs`: steps created or
   * finished, a wait carried by a superseding unit (`behind_ms`), and `lastSuccessMs`/`lastErrorMs`. They come from a clock that stepped back (a PC
   * that booted with a clock hours fast, then NTP), and health reads them against now: a step
   * finished "in the future" counted as progress within the window, and a step waiting since then
   * as waiting for no time, so health said healthy for the length of the step whatever moved.
   * Returns the rows moved.
   */
  clampFuture(nowMs: number): number {
    return this.db.transaction(() => {
      // One pass for both: a unit planned after the step back can carry a wait begun before it.
      let n = this.db
        .prepare(`UPDATE sync_outbox SET created_ms = MIN(created_ms, ?), behind_ms = MIN(behind_ms, ?) WHERE created_ms > ? OR behind_ms > ?`)
        .run(nowMs, nowMs, nowMs, nowMs).changes;
      n += this.db.prepare(`UPDATE sync_outbox SET done_ms = ? WHERE state = 'done' AND done_ms > ?`).run(nowMs, nowMs).changes;
      for (const k of ['lastSuccessMs', 'lastErrorMs']) {
        const v = this.getState(k);
        if (v !== undefined && Number(v) > nowMs) this.setState(k, String(nowMs));
      }
      return n;
    })();
  }

  /** Earliest time a pending step becomes due (for the loop's sleep), or undefined. */
  nextDueMs(): number | undefined {
    const r = this.db.prepare(`SELECT MIN(next_attempt_ms) AS t FROM sync_outbox WHERE state = 'pending'`).get() as { t: number | null };
    return r.t ?? undefined;
  }

  /** A finished step with this key (HQ has it, verified); without a hash, a file HQ has (`atHq`). */
  doneWithKey(key: string, sha256?: string): boolean {
    if (sha256 === undefined) return this.atHq(key);
    return this.db.prepare(`SELECT 1 FROM sync_outbox WHERE key = ? AND state = 'done' AND op IN ('put', 'pointer') AND sha256 = ? LIMIT 1`).get(key, sha256) !== undefined;
  }

  /**
   * Whether HQ has this file (of this size, when given), by the record of verified file steps
   * (`sync_at_hq`: kept while the site still has the file, `forgetAtHq`).
   */
  atHq(key: string, size?: number): boolean {
    const r = this.db.prepare('SELECT size FROM sync_at_hq WHERE key = ?').get(key) as { size: number } | undefined;
    return r !== undefined && (size === undefined || r.size === size);
  }

  /**
   * Records a unit HQ already holds as done (one pointer step, nothing sent), so it is not planned
   * again; with the pointer's bytes when known (a tag's JSON: what a renewal is compared with).
   */
  addHeld(row: NewRow, nowMs: number): void {
    this.db
      .prepare(`INSERT INTO sync_outbox (unit, table_name, phase, op, body, key, size, priority, state, created_ms, done_ms) VALUES (?, ?, ?, ?, ?, ?, 0, ?, 'done', ?, ?)`)
      .run(row.unit, row.table_name ?? null, row.phase, row.op, row.body ?? null, row.key ?? null, row.priority, nowMs, nowMs);
  }

  /**
   * Forgets everything the outbox knows of HQ — every step, pending or done, and the record — for
   * a new target (another share, a USB disk swapped, HQ moved): what was sent went elsewhere, and a
   * pending pointer must not reach the new target before its files. Returns the steps dropped.
   * `keepRemovals` (a take-over: the same HQ): the pending `untag:` steps stay — HQ still holds the
   * run tags they remove, and nothing would plan their removal again once the site's unit is gone.
   */
  forgetTarget(keepRemovals = false): number {
    return this.db.transaction(() => {
      const [from, to] = prefixRange('untag:');
      const n = keepRemovals
        ? this.db.prepare(`DELETE FROM sync_outbox WHERE NOT (unit >= ? AND unit < ? AND state = 'pending')`).run(from, to).changes
        : this.db.prepare('DELETE FROM sync_outbox').run().changes;
      this.db.prepare('DELETE FROM sync_at_hq').run();
      return n;
    })();
  }

  /**
   * The record's entries in key order, with the site file each was sent from: every one, or at most
   * `limit` after the key `after` (a slice of a walk through the record).
   */
  atHqEntries(after = '', limit = -1): Array<{ key: string; src: string | null }> {
    return this.db.prepare('SELECT key, src FROM sync_at_hq WHERE key > ? ORDER BY key LIMIT ?').all(after, limit) as Array<{ key: string; src: string | null }>;
  }

  /** Drops entries of the record (their site files are gone: nothing will reference them again). */
  forgetAtHq(keys: readonly string[]): void {
    const del = this.db.prepare('DELETE FROM sync_at_hq WHERE key = ?');
    this.db.transaction(() => {
      for (const k of keys) del.run(k);
    })();
  }

  /**
   * A unit that is pending or done (not cancelled). Done means HQ got it: a unit whose pointer was
   * cancelled before it reached HQ (a tag deleted on the site while it waited, dropped after some
   * of its files went) is not done, whatever files it sent — taken for done, a tag of that name
   * made later was never sent (tag-deleted-while-pending.test.ts).
   */
  unitState(unit: string): 'pending' | 'done' | undefined {
    const r = this.db.prepare(`SELECT ${UNIT_STATE_SUMS} FROM sync_outbox WHERE unit = ?`).get(unit) as { p: number | null; d: number | null };
    if (r.p) return 'pending';
    if (r.d) return 'done';
    return undefined;
  }

  /** `unitState` of every unit whose name starts with `prefix`, in one query (units neither pending nor done are left out). */
  unitStates(prefix: string): Map<string, 'pending' | 'done'> {
    const rows = this.db
      .prepare(`SELECT unit, ${UNIT_STATE_SUMS} FROM sync_outbox WHERE unit >= ? AND unit < ? GROUP BY unit`)
      .all(...prefixRange(prefix)) as Array<{ unit: string; p: number; d: number }>;
    const out = new Map<string, 'pending' | 'done'>();
    for (const r of rows) if (r.p || r.d) out.set(r.unit, r.p ? 'pending' : 'done');
    return out;
  }

  /** Per unit whose name starts with `prefix`, the body of its newest pointer step that has one. */
  pointerBodies(prefix: string): Map<string, Buffer> {
    const rows = this.db
      .prepare(`SELECT unit, body FROM sync_outbox WHERE unit >= ? AND unit < ? AND op = 'pointer' AND body IS NOT NULL AND state != 'cancelled' ORDER BY id`)
      .all(...prefixRange(prefix)) as Array<{ unit: string; body: Buffer }>;
    const out = new Map<string, Buffer>();
    for (const r of rows) out.set(r.unit, r.body);
    return out;
  }

  /** Among units whose name starts with `prefix`, the newest pointer step of `phase` not cancelled: its unit and body. */
  lastPointer(prefix: string, phase: number): { unit: string; body: Buffer | null } | undefined {
    return this.db
      .prepare(`SELECT unit, body FROM sync_outbox WHERE unit >= ? AND unit < ? AND phase = ? AND op = 'pointer' AND state != 'cancelled' ORDER BY id DESC LIMIT 1`)
      .get(...prefixRange(prefix), phase) as { unit: string; body: Buffer | null } | undefined;
  }

  setHashes(id: number, sha256: string, md5: string, size: number): void {
    this.db.prepare('UPDATE sync_outbox SET sha256 = ?, md5 = ?, size = ? WHERE id = ?').run(sha256, md5, size, id);
  }

  markDone(id: number, sentBytes: number, nowMs: number): void {
    this.db.transaction(() => {
      this.db.prepare(`UPDATE sync_outbox SET state = 'done', done_ms = ?, sent_bytes = ?, last_error = NULL WHERE id = ?`).run(nowMs, sentBytes, id);
      // A file step: HQ has the file, verified (the record planning asks instead of listing HQ).
      this.db.prepare(`INSERT OR REPLACE INTO sync_at_hq (key, size, src) SELECT key, size, src FROM sync_outbox WHERE id = ? AND op = 'put' AND key IS NOT NULL`).run(id);
      this.setState('lastSuccessMs', String(nowMs));
    })();
  }

  markFailed(id: number, error: string, nextAttemptMs: number): void {
    this.db.prepare(`UPDATE sync_outbox SET attempts = attempts + 1, last_error = ?, next_attempt_ms = ? WHERE id = ?`).run(error.slice(0, 1000), nextAttemptMs, id);
  }

  /**
   * When HQ's copy began waiting for what a pending unit carries, if its pointer (of phase
   * `pointerPhase`) has not reached HQ: the wait a unit that supersedes it takes over for health
   * (`behind_ms`). Undefined once the pointer is done: HQ then had that state, and what is behind
   * is only what came after.
   */
  behindSince(unit: string, pointerPhase: number): number | undefined {
    // Phases run in order, so a pending step at or below the pointer's phase means the pointer is not at HQ.
    const t = this.db
      .prepare(`SELECT MIN(COALESCE(behind_ms, created_ms)) FROM sync_outbox WHERE unit = ? AND state = 'pending' AND phase <= ?`)
      .pluck()
      .get(unit, pointerPhase) as number | null;
    return t ?? undefined;
  }

  /** A pending unit's pending steps that have failed (attempts > 0): read before it is superseded. */
  failedSteps(unit: string): Array<{ id: number; phase: number; op: OutboxOp; key: string | null; attempts: number; last_error: string | null }> {
    return this.db
      .prepare(`SELECT id, phase, op, key, attempts, last_error FROM sync_outbox WHERE unit = ? AND state = 'pending' AND attempts > 0 ORDER BY id`)
      .all(unit) as Array<{ id: number; phase: number; op: OutboxOp; key: string | null; attempts: number; last_error: string | null }>;
  }

  /**
   * Gives the pending step of `phase` in `unit` (a unit that superseded one whose step of that phase
   * kept failing) that step's attempts and last error, so status reports the failure as one; returns its id.
   */
  inheritFailure(unit: string, phase: number, attempts: number, lastError: string | null): number | undefined {
    return this.db
      .prepare(`UPDATE sync_outbox SET attempts = ?, last_error = ? WHERE id = (SELECT id FROM sync_outbox WHERE unit = ? AND phase = ? AND state = 'pending' ORDER BY id LIMIT 1) RETURNING id`)
      .pluck()
      .get(attempts, lastError, unit, phase) as number | undefined;
  }

  /** `inheritFailure` for the pending `put` of `key` in `unit` (a file the superseded unit had too); returns its id. */
  inheritFailureOfKey(unit: string, key: string, attempts: number, lastError: string | null): number | undefined {
    return this.db
      .prepare(`UPDATE sync_outbox SET attempts = ?, last_error = ? WHERE id = (SELECT id FROM sync_outbox WHERE unit = ? AND key = ? AND op = 'put' AND state = 'pending' ORDER BY id LIMIT 1) RETURNING id`)
      .pluck()
      .get(attempts, lastError, unit, key) as number | undefined;
  }

  /** Cancels the pending steps of a unit (superseded snapshot, or its source vanished). */
  cancelUnit(unit: string, why: string): number {
    return this.db.prepare(`UPDATE sync_outbox SET state = 'cancelled', last_error = ? WHERE unit = ? AND state = 'pending'`).run(why, unit).changes;
  }

  /** Cancels the pending steps that write `key` (a contract's older version); returns how many. */
  cancelKey(key: string, why: string): number {
    return this.db.prepare(`UPDATE sync_outbox SET state = 'cancelled', last_error = ? WHERE key = ? AND state = 'pending'`).run(why, key).changes;
  }

  /** Units that start with `prefix` and have a pending step. */
  pendingUnits(prefix: string): string[] {
    return this.db.prepare(`SELECT DISTINCT unit FROM sync_outbox WHERE unit >= ? AND unit < ? AND state = 'pending'`).pluck().all(...prefixRange(prefix)) as string[];
  }

  /** Last sha256 sent or queued for a key (contracts change in place). */
  lastShaForKey(key: string): string | undefined {
    const r = this.db.prepare(`SELECT sha256 FROM sync_outbox WHERE key = ? AND state != 'cancelled' ORDER BY id DESC LIMIT 1`).get(key) as { sha256: string | null } | undefined;
    return r?.sha256 ?? undefined;
  }

  totals(nowMs: number, windowMs: number): { pendingItems: number; pendingBytes: number; oldestCreatedMs: number | null; recentBytes: number; recentItems: number; lastError: string | null } {
    // A unit that superseded one HQ never got whole waits since that one was planned (`behindSince`).
    this.behindColumn ??= hasColumn(this.db, 'behind_ms');
    const since = this.behindColumn ? 'COALESCE(behind_ms, created_ms)' : 'created_ms';
    const p = this.db.prepare(`SELECT COUNT(*) AS n, COALESCE(SUM(size), 0) AS b, MIN(${since}) AS t FROM sync_outbox WHERE state = 'pending'`).get() as { n: number; b: number; t: number | null };
    // Not after now: a step finished by a clock that was fast is no progress now (`clampFuture`).
    const r = this.db.prepare(`SELECT COUNT(*) AS n, COALESCE(SUM(sent_bytes), 0) AS b FROM sync_outbox WHERE state = 'done' AND done_ms >= ? AND done_ms <= ?`).get(nowMs - windowMs, nowMs) as { n: number; b: number };
    const e = this.db.prepare(`SELECT last_error FROM sync_outbox WHERE state = 'pending' AND last_error IS NOT NULL ORDER BY next_attempt_ms DESC LIMIT 1`).get() as { last_error: string } | undefined;
    return { pendingItems: p.n, pendingBytes: p.b, oldestCreatedMs: p.t, recentBytes: r.b, recentItems: r.n, lastError: e?.last_error ?? null };
  }

  /**
   * Forgets finished work, so the outbox stays the size of what the site still holds instead of
   * growing with every tag and snapshot ever sent (about 190,000 rows a day on a site whose agent
   * runs every minute). Looks at tag and snapshot units that ended before `beforeMs` with nothing
   * pending: one that is not `live` (the engine's test: a tag the site no longer has, a snapshot
   * that is not its table's latest) or was cancelled whole loses every row; a live one keeps all but
   * its finished file steps, so its pointer still says it is done (`unitState`) and planning does
   * not plan it again. Whether HQ has a file is not forgotten with them: that is `sync_at_hq`
   * (`atHq`), pruned by the engine when the site's file is gone.
   *
   * A unit that is not live and whose pointer reached HQ may leave a step behind: `removal` gets
   * the unit and its pointer's key and returns the step that takes the pointer off HQ (the engine
   * does so for run tags the site expired), added in the same transaction that forgets the unit,
   * so a crash never forgets the one without the other. Finished `untag:` units go whole.
   * Contract steps that ended before `beforeMs` go when cancelled, or done and replaced by a newer
   * done step of their key. Returns the rows deleted.
   */
  compact(beforeMs: number, live: (unit: string) => boolean, nowMs: number, removal?: (unit: string, pointerKey: string) => NewRow | undefined): number {
    const ended = this.db
      .prepare(
        `SELECT unit, SUM(state = 'done') AS d, MAX(CASE WHEN op = 'pointer' AND state = 'done' THEN key END) AS pointer
           FROM sync_outbox WHERE unit LIKE 'tag:%' OR unit LIKE 'snapshot:%' OR unit LIKE 'untag:%'
           GROUP BY unit HAVING SUM(state = 'pending') = 0 AND MAX(COALESCE(done_ms, created_ms)) < ?`,
      )
      .all(beforeMs) as Array<{ unit: string; d: number; pointer: string | null }>;
    const whole = this.db.prepare('DELETE FROM sync_outbox WHERE unit = ?');
    const files = this.db.prepare(`DELETE FROM sync_outbox WHERE unit = ? AND op = 'put' AND state = 'done'`);
    let deleted = 0;
    this.db.transaction(() => {
      for (const u of ended) {
        if (u.d > 0 && live(u.unit)) {
          deleted += files.run(u.unit).changes;
          continue;
        }
        const step = u.pointer === null ? undefined : removal?.(u.unit, u.pointer);
        deleted += whole.run(u.unit).changes;
        if (step) this.add([step], nowMs);
      }
      // Contracts: a step cancelled (superseded, or refused — an engine before planContracts
      // planned and cancelled a whole batch every round behind one refused name) and a finished
      // step a newer finished one of its key replaced. `lastShaForKey` reads the newest step not
      // cancelled, which stays.
      deleted += this.db
        .prepare(
          `DELETE FROM sync_outbox WHERE unit >= 'contracts:' AND unit < 'contracts;' AND COALESCE(done_ms, created_ms) < ?
             AND (state = 'cancelled' OR (state = 'done' AND EXISTS (SELECT 1 FROM sync_outbox n WHERE n.key = sync_outbox.key AND n.state = 'done' AND n.id > sync_outbox.id)))`,
        )
        .run(beforeMs).changes;
    })();
    return deleted;
  }

  /** Records a unit dropped (call in the transaction that cancels it): the last DROPPED_KEPT are kept. */
  noteDropped(d: DroppedUnit): void {
    this.setState(DROPPED, JSON.stringify([...this.dropped(), d].slice(-DROPPED_KEPT)));
  }

  /** The units dropped lately (`noteDropped`), oldest first; [] when none or unreadable. */
  dropped(): DroppedUnit[] {
    const v = this.getState(DROPPED);
    if (v === undefined) return [];
    try {
      const list: unknown = JSON.parse(v);
      if (!Array.isArray(list)) return [];
      return list.filter((d): d is DroppedUnit => typeof d?.unit === 'string' && typeof d?.why === 'string' && Number.isFinite(d?.atMs));
    } catch {
      return [];
    }
  }

  rows(): OutboxRow[] {
    return this.db.prepare('SELECT * FROM sync_outbox ORDER BY id').all() as OutboxRow[];
  }

  getState(k: string): string | undefined {
    const r = this.db.prepare('SELECT v FROM sync_state WHERE k = ?').get(k) as { v: string } | undefined;
    return r?.v;
  }

  setState(k: string, v: string | null): void {
    if (v === null) this.db.prepare('DELETE FROM sync_state WHERE k = ?').run(k);
    else this.db.prepare('INSERT INTO sync_state (k, v) VALUES (?, ?) ON CONFLICT(k) DO UPDATE SET v = excluded.v').run(k, v);
  }
}
