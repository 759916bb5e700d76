// Who changed which config.json key from the floor UI, when, from what to what: `config_changes`
// in `<data>/site.db`. A change made there (a reorder point set on the Stock screen) is a decision
// about what the agent proposes, so it is kept under the person's name, as decisions are; an edit
// of config.json by hand is the file's owner's and is not recorded here (the site log names the
// sections a reload applied).
//
// Concurrency: the site's connection writes; `tilstand config changes` reads with its own (WAL).
// Invariant: rows are only added, never changed or deleted.

import type Database from 'better-sqlite3';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS config_changes (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at_ms INTEGER NOT NULL,
  user TEXT NOT NULL,
  key TEXT NOT NULL,
  before_json TEXT NOT NULL,
  after_json TEXT NOT NULL
);
`;

export interface ConfigChange {
  id: number;
  atMs: number;
  user: string;
  /** The key's path from config.json's top, e.g. `agent.reorderByItem.ITEM-001.locations.A-01`. */
  key: string;
  /** The key's value before and after (null: not set). */
  before: unknown;
  after: unknown;
}

export class ConfigChanges {
  private readonly db: Database.Database;

  constructor(db: Database.Database) {
    this.db = db;
    if (!db.readonly) db.exec(SCHEMA);
  }

  record(c: Omit<ConfigChange, 'id'>): ConfigChange {
    const r = this.db
      .prepare('INSERT INTO config_changes (at_ms, user, key, before_json, after_json) VALUES (?, ?, ?, ?, ?)')
      .run(c.atMs, c.user, c.key, JSON.stringify(c.before ?? null), JSON.stringify(c.after ?? null));
    return { id: Number(r.lastInsertRowid), ...c };
  }

  /** The newest first, at most `limit`; none on a site.db from before the table. */
  list(limit = 100): ConfigChange[] {
    const exists = this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'config_changes'").pluck().get();
    if (exists === undefined) return [];
    const rows = this.db.prepare('SELECT id, at_ms, user, key, before_json, after_json FROM config_changes ORDER BY id DESC LIMIT ?').all(limit) as Array<{
      id: number;
      at_ms: number;
      user: string;
      key: string;
      before_json: string;
      after_json: string;
    }>;
    return rows.map((r) => ({ id: r.id, atMs: r.at_ms, user: r.user, key: r.key, before: JSON.parse(r.before_json) as unknown, after: JSON.parse(r.after_json) as unknown }));
  }
}
