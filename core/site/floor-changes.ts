// The config.json keys people changed from the floor UI (`Site.setReorderPolicy`): the decision
// log's `config_changed` entries, kept in site.db as well so that reading them does not cost a
// scan of the whole log.
//
// The decision log is the record (it travels to HQ with the decisions), and it holds every entry
// ever made: a demo-like site adds ~7,500 a day, and reading its `config_changed` entries took
// ~0.3 s per 300,000 entries, on the event loop, at the first look at the Stock screen after each
// start — seconds after a year. site.db keeps the changes found so far and the entry id the log
// was read through (`site_meta` `floor_changes_through`); a read looks only at later entries (the
// log's files are ordered by entry id, so older files are not opened).
//
// Concurrency: the site's one connection to site.db, on its event loop. `site_meta` is the
// UserStore's table (core/inbox users.ts), which the site opens first.
// Invariant: every `config_changed` entry with an id ≤ `floor_changes_through` is in
// `floor_changes` (a change made here is added when the log has it committed).
//
// A change whose config.json write failed after its record (`Site.setReorderPolicy` records
// first) is followed in the log by a correction under the same name, from the value it claimed
// back to the one the file holds. Both are in the list, as the log has them; `floor_changes_not_made`
// names the two, and a key's last setting skips them: the correction did not set the value the
// file holds, whoever did is still its setter. (A site.db rebuilt from the log alone has no such
// marks: the correction then reads as a change back by the same person.) So is a change whose
// record failed to commit (config.json not written): the log's writer keeps the entry for its next
// commit, and the correction follows it there; the pair is marked once the log has both
// (`notMadeFound`).

import type Database from 'better-sqlite3';
import { decisionLogNextId, readConfigChanges, type ConfigChange, type Json } from '../inbox/index.ts';
import type { Table } from '../lsm/index.ts';
import { currentReorderPolicyKey } from './config.ts';
import { setSiteMeta, siteMeta } from './site-db.ts';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS floor_changes (
  entry_id INTEGER PRIMARY KEY,
  at_ms INTEGER NOT NULL,
  user TEXT NOT NULL,
  key TEXT NOT NULL,
  before_json TEXT NOT NULL,
  after_json TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS floor_changes_not_made (entry_id INTEGER PRIMARY KEY);
`;
const THROUGH = 'floor_changes_through';

export interface FloorChangeList {
  /** Newest first. */
  readonly list: ConfigChange[];
  /**
   * Each key's last change, by the key as `reorderPolicyKey` writes it now (`currentReorderPolicyKey`:
   * an entry recorded before ids with a dot were quoted is found under its policy's key of today).
   */
  readonly byKey: Map<string, ConfigChange>;
}

export class FloorChanges {
  private cached: { list: ConfigChange[]; byKey: Map<string, ConfigChange>; notMade: Set<number> } | undefined;

  constructor(
    private readonly db: Database.Database,
    private readonly log: Table,
  ) {
    db.exec(SCHEMA);
  }

  /** Every change, from site.db and the log's entries after what site.db was brought up to; read once, then kept. */
  read(): FloorChangeList {
    if (this.cached) return this.cached;
    const through = Number(siteMeta(this.db, THROUGH) ?? 0);
    // Read before the scan: the entries below it are in the snapshot the scan reads, or an older one.
    const next = decisionLogNextId(this.log);
    const found = readConfigChanges(this.log, through + 1);
    this.db.transaction(() => {
      for (const c of found) this.store(c);
      if (next !== undefined && next - 1 > through) {
        setSiteMeta(this.db, THROUGH, String(next - 1));
      }
    })();
    const rows = this.db.prepare('SELECT entry_id, at_ms, user, key, before_json, after_json FROM floor_changes ORDER BY entry_id DESC').all() as Array<{
      entry_id: number;
      at_ms: number;
      user: string;
      key: string;
      before_json: string;
      after_json: string;
    }>;
    const list = rows.map((r) => ({ id: r.entry_id, atMs: r.at_ms, user: r.user, key: r.key, before: JSON.parse(r.before_json) as Json, after: JSON.parse(r.after_json) as Json }));
    const notMade = new Set((this.db.prepare('SELECT entry_id FROM floor_changes_not_made').pluck().all() as number[]).map(Number));
    const byKey = new Map<string, ConfigChange>();
    for (const c of list) {
      const key = currentReorderPolicyKey(c.key);
      if (!byKey.has(key) && !notMade.has(c.id)) byKey.set(key, c);
    }
    this.cached = { list, byKey, notMade };
    return this.cached;
  }

  /** A change just recorded (committed) in the log. */
  add(c: ConfigChange): void {
    this.store(c);
    if (this.cached) {
      this.cached.list.unshift(c);
      this.cached.byKey.set(currentReorderPolicyKey(c.key), c);
    }
  }

  /**
   * `correction`, just recorded (committed) in the log after `failed`, a change this list has whose
   * config.json write failed: it puts the key's old value back. Neither is the key's last setting.
   */
  notMade(failed: ConfigChange, correction: ConfigChange): void {
    this.db.transaction(() => {
      this.store(correction);
      const mark = this.db.prepare('INSERT OR IGNORE INTO floor_changes_not_made (entry_id) VALUES (?)');
      mark.run(failed.id);
      mark.run(correction.id);
    })();
    if (!this.cached) return;
    const { list, byKey, notMade } = this.cached;
    list.unshift(correction);
    notMade.add(failed.id).add(correction.id);
    const key = currentReorderPolicyKey(failed.key);
    const last = list.find((c) => currentReorderPolicyKey(c.key) === key && !notMade.has(c.id));
    if (last) byKey.set(key, last);
    else byKey.delete(key);
  }

  /**
   * A pair the log committed later than it was made (`Site.recordNotCommitted`: a change whose
   * record failed to commit, and its correction): both stored and marked; the list is read again.
   */
  notMadeFound(failed: ConfigChange, correction: ConfigChange): void {
    this.db.transaction(() => {
      this.store(failed);
      this.store(correction);
      const mark = this.db.prepare('INSERT OR IGNORE INTO floor_changes_not_made (entry_id) VALUES (?)');
      mark.run(failed.id);
      mark.run(correction.id);
    })();
    this.cached = undefined;
  }

  private store(c: ConfigChange): void {
    this.db
      .prepare('INSERT OR IGNORE INTO floor_changes (entry_id, at_ms, user, key, before_json, after_json) VALUES (?, ?, ?, ?, ?, ?)')
      .run(c.id, c.atMs, c.user, c.key, JSON.stringify(c.before), JSON.stringify(c.after));
  }
}
