// `<data>/site.db` (better-sqlite3, WAL): users (core/inbox/users.ts owns that table), and the
// broker credentials of the site's modules and of Tilstand itself (this file).
//
// Module credentials: one row per broker username, with the principal it maps to and a slow
// salted scrypt hash of its password. `ModuleCredentials` is the broker's `CredentialStore`.
// Concurrency: one connection per process; the CLI opens its own while a site runs (WAL lets
// readers and one writer share the file; busy_timeout covers short write overlaps).
// Invariants: no plaintext password is stored in site.db. A connection opened for writing has
// raised the data directory's format mark (data-format.ts) before anyone changed a table.

import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import type { CredentialStore, Principal } from '../ingest/broker.ts';
import { hashSecret, verifySecret, type ScryptParams } from '../inbox/secret-hash.ts';
import { raiseDataFormat } from './data-format.ts';

/** A value of site.db's `site_meta` (core/inbox users.ts makes the table), or undefined. */
export function siteMeta(db: Database.Database, key: string): string | undefined {
  return db.prepare('SELECT value FROM site_meta WHERE key = ?').pluck().get(key) as string | undefined;
}

/** Sets a value of site.db's `site_meta`. */
export function setSiteMeta(db: Database.Database, key: string, value: string): void {
  db.prepare('INSERT INTO site_meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value').run(key, value);
}

/** The modules a site starts with; each gets broker credentials at init. */
export const SITE_MODULES = ['operations', 'inventory', 'commerce', 'procurement'] as const;
/** Tilstand's own broker user (publishes commands and resync requests). */
export const TILSTAND_PRINCIPAL = 'tilstand';

export function openSiteDb(path: string, options: { readonly?: boolean } = {}): Database.Database {
  // The data format mark first, before site.db is touched and any caller's migration (UserStore,
  // the outbox) alters a table: a directory a newer program requires is refused unchanged.
  if (!options.readonly) raiseDataFormat(dirname(path));
  const db = new Database(path, { readonly: options.readonly === true, fileMustExist: options.readonly === true });
  db.pragma('busy_timeout = 5000');
  if (!options.readonly) {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
  }
  return db;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS broker_credentials (
  username TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('module', 'tilstand', 'admin')),
  module TEXT,
  password_hash TEXT NOT NULL,
  created_at_ms INTEGER NOT NULL -- when the password was last set (named for the first time)
);
`;

export class ModuleCredentials implements CredentialStore {
  private readonly db: Database.Database;

  constructor(db: Database.Database, private readonly params?: ScryptParams) {
    this.db = db;
    if (!db.readonly) db.exec(SCHEMA);
  }

  /** Stores (or replaces) a broker user's password hash. */
  async set(principal: Principal, password: string, nowMs = Date.now()): Promise<void> {
    const hash = await hashSecret(password, this.params);
    this.db
      .prepare(
        'INSERT INTO broker_credentials (username, kind, module, password_hash, created_at_ms) VALUES (?, ?, ?, ?, ?) ' +
          'ON CONFLICT(username) DO UPDATE SET kind = excluded.kind, module = excluded.module, password_hash = excluded.password_hash, created_at_ms = excluded.created_at_ms',
      )
      .run(principal.name, principal.kind, principal.module ?? null, hash, nowMs);
  }

  async verify(username: string, password: string): Promise<Principal | null> {
    const row = this.db.prepare('SELECT username, kind, module, password_hash FROM broker_credentials WHERE username = ?').get(username) as
      | { username: string; kind: Principal['kind']; module: string | null; password_hash: string }
      | undefined;
    if (!row) return null;
    if (!(await verifySecret(password, row.password_hash))) return null;
    return row.module === null ? { name: row.username, kind: row.kind } : { name: row.username, kind: row.kind, module: row.module };
  }

  /** Every broker user, by username, with when its password was set. */
  principals(): Array<Principal & { setAtMs: number }> {
    const rows = this.db.prepare('SELECT username, kind, module, created_at_ms FROM broker_credentials ORDER BY username').all() as Array<{ username: string; kind: Principal['kind']; module: string | null; created_at_ms: number }>;
    return rows.map((r) => ({ name: r.username, kind: r.kind, ...(r.module === null ? {} : { module: r.module }), setAtMs: r.created_at_ms }));
  }
}

/** The principal of a site module's broker user. */
export const modulePrincipal = (module: string): Principal => ({ name: module, kind: 'module', module });
export const tilstandPrincipal: Principal = { name: TILSTAND_PRINCIPAL, kind: 'tilstand' };
