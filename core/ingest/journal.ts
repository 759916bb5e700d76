// The ingest journal: every accepted event, appended durably before anyone acknowledges it.
//
// One better-sqlite3 connection to `<data>/journal.db` (WAL mode, synchronous=FULL, so a returned
// commit is on disk). Appends from all connections are GROUP-COMMITTED: `append` queues the event
// and returns a promise; the queue is flushed on the next `setImmediate` (so everything that arrived
// in the same tick, e.g. all PUBLISH packets of one socket read, shares one transaction) and every
// promise of a group resolves after that group's COMMIT returned.
//
// Concurrency contract: single-threaded (Node's event loop). better-sqlite3 is synchronous, so a
// commit blocks the loop for its fsync; appends that arrive meanwhile wait in the kernel's socket
// buffers and form the next, larger group (see TRANSPORT.md, "group commit").
//
// Invariants:
//   - positions are strictly increasing and never reused, even after prune deletes the newest rows:
//     the writer assigns them itself and records the last one in `meta.last_position` in the same
//     transaction as the rows (format 2; format-1 files, whose table used AUTOINCREMENT, keep their
//     high-water mark in sqlite_sequence and are read the same way);
//   - a promise returned by `append` resolves only after the COMMIT covering its row returned;
//   - a group never exceeds `groupEventsMax` events or `groupBytesMax` payload+topic bytes
//     (one oversized event is a group of its own);
//   - prune never deletes a row whose position is > keepAfter.
import Database from 'better-sqlite3';
import { statfsSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { dirname, join } from 'node:path';

export const JOURNAL_FILE_NAME = 'journal.db';

/** CRC-32 of one journal row: every field, then the payload. */
function rowCrc(position: number, receivedAtMs: number, module: string, stream: string, seq: number | null, topic: string, payload: Buffer): number {
  const head = crc32(`${position}\u0000${receivedAtMs}\u0000${module}\u0000${stream}\u0000${seq ?? ''}\u0000${topic}\u0000`);
  return crc32(payload, head);
}

export type JournalErrorKind = 'InvalidArgument' | 'Corruption' | 'DiskFull' | 'IOError' | 'Closed';

export class JournalError extends Error {
  readonly kind: JournalErrorKind;
  readonly path: string;
  constructor(kind: JournalErrorKind, path: string, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = `JournalError(${kind})`;
    this.kind = kind;
    this.path = path;
  }
}

export interface JournalEvent {
  topic: string;
  payload: Buffer;
  receivedAtMs: number;
  module: string;
  stream: string;
  /** The module's per-stream sequence when the sink already knows it (contracts parse it later). */
  seq?: number | bigint;
}

export interface JournalEntry {
  position: bigint;
  topic: string;
  payload: Buffer;
  receivedAtMs: number;
  module: string;
  stream: string;
  seq: bigint | null;
}

export interface JournalOptions {
  /** Flush a group when this many events are queued. Bounds one transaction's work. */
  groupEventsMax?: number;
  /** Flush a group when its payload+topic bytes reach this. Bounds one transaction's memory. */
  groupBytesMax?: number;
  /** Rows fetched per page by `readAfter`; the connection is never held between pages. */
  readPageRows?: number;
  /** Rows deleted per transaction by `prune`; appends can run between two batches. */
  pruneBatchRows?: number;
  /** Clock for prune's maxAgeMs; injected by tests. */
  nowMs?: () => number;
}

const DEFAULTS = {
  groupEventsMax: 1000, // ~280 events per fsync were measured at full speed; 1000 leaves headroom
  groupBytesMax: 4 * 1024 * 1024, // a 4 MiB transaction keeps one commit's fsync in the milliseconds
  readPageRows: 500,
  pruneBatchRows: 5000,
};

export interface JournalStats {
  commits: number;
  events: number;
  /** Mean events per COMMIT (= per fsync of the WAL). */
  eventsPerCommitMean: number;
  eventsPerCommitMax: number;
  commitMsTotal: number;
  commitMsMax: number;
  lastPosition: bigint;
  failedCommits: number;
}

interface Pending {
  event: JournalEvent;
  bytes: number;
  resolve: (position: bigint) => void;
  reject: (err: unknown) => void;
}

function positiveInt(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value <= 0) {
    throw new JournalError('InvalidArgument', '', `Journal option ${name}: expected a positive integer, got ${value}`);
  }
  return value;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS journal (
  position INTEGER PRIMARY KEY,
  received_at_ms INTEGER NOT NULL,
  module TEXT NOT NULL,
  stream TEXT NOT NULL,
  seq INTEGER,
  topic TEXT NOT NULL,
  payload BLOB NOT NULL,
  size_bytes INTEGER NOT NULL,
  crc INTEGER
);
CREATE TABLE IF NOT EXISTS checkpoint (name TEXT PRIMARY KEY, position INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
INSERT OR IGNORE INTO meta (key, value) VALUES ('format', 'tilstand-journal-2');
`;

/** Per-row bookkeeping bytes added to payload+topic in size_bytes (row header, index entry). */
const ROW_OVERHEAD_BYTES = 48;

export class Journal {
  readonly path: string;
  private readonly db: Database.Database;
  private readonly opts: Required<JournalOptions>;
  private readonly insert: Database.Statement;
  /** First position whose row must carry a CRC (rows before it predate the column). */
  private readonly crcFrom: bigint;
  private readonly commitGroup: (group: Pending[]) => bigint[];
  private queue: Pending[] = [];
  private flushScheduled = false;
  private closed = false;
  private s = { commits: 0, events: 0, max: 0, msTotal: 0, msMax: 0, failed: 0, last: 0n };

  /** Opens (creating if needed) `<dataDir>/journal.db`. Throws JournalError('Corruption') naming the file. */
  static open(dataDir: string, options: JournalOptions = {}): Journal {
    return new Journal(join(dataDir, JOURNAL_FILE_NAME), options);
  }

  constructor(path: string, options: JournalOptions = {}) {
    this.path = path;
    this.opts = {
      groupEventsMax: positiveInt('groupEventsMax', options.groupEventsMax, DEFAULTS.groupEventsMax),
      groupBytesMax: positiveInt('groupBytesMax', options.groupBytesMax, DEFAULTS.groupBytesMax),
      readPageRows: positiveInt('readPageRows', options.readPageRows, DEFAULTS.readPageRows),
      pruneBatchRows: positiveInt('pruneBatchRows', options.pruneBatchRows, DEFAULTS.pruneBatchRows),
      nowMs: options.nowMs ?? Date.now,
    };
    let db: Database.Database | undefined;
    try {
      db = new Database(path);
      db.defaultSafeIntegers(true);
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      // A file that holds tables must hold exactly ours: a flipped bit in a table's name would
      // otherwise make CREATE TABLE IF NOT EXISTS start an empty journal beside the lost one.
      const tables = (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").pluck().all() as string[]).join(',');
      if (tables !== '' && tables !== 'checkpoint,journal,meta') {
        throw new JournalError('Corruption', path, `journal file ${path} is corrupt (open): unexpected tables ${tables}`);
      }
      db.exec(SCHEMA);
      const format = db.prepare("SELECT value FROM meta WHERE key = 'format'").pluck().get();
      if (format !== 'tilstand-journal-1' && format !== 'tilstand-journal-2') {
        throw new Error(`unexpected journal format ${String(format)}`);
      }
    } catch (err) {
      db?.close();
      throw this.wrapOpen(err);
    }
    this.db = db;
    let saveLast: Database.Statement;
    try {
      // Positions are assigned here (no AUTOINCREMENT: it costs a sqlite_sequence update per row);
      // numbers travel as JS numbers on the hot path and become bigint once, for the caller.
      // A CRC-32 per row over every field: SQLite keeps no page checksums, and a flipped bit in a
      // payload must be refused as corruption on replay, never read back as an event.
      const columns = db.prepare('PRAGMA table_info(journal)').all() as Array<{ name: string }>;
      // A flipped bit in the schema text renames a column: refuse the file rather than misread it.
      const names = columns.map((c) => c.name).filter((n) => n !== 'crc').join(',');
      if (names !== 'position,received_at_ms,module,stream,seq,topic,payload,size_bytes') {
        throw new JournalError('Corruption', path, `journal file ${path} is corrupt (open): unexpected journal columns ${names}`);
      }
      // Rows from `crc_from` on must carry a CRC; only rows written before the column existed may not.
      if (!columns.some((c) => c.name === 'crc')) {
        db.exec('ALTER TABLE journal ADD COLUMN crc INTEGER');
        const max = db.prepare('SELECT MAX(position) FROM journal').pluck().get() as bigint | null;
        db.prepare("INSERT OR REPLACE INTO meta (key, value) VALUES ('crc_from', ?)").run(String((max ?? 0n) + 1n));
      }
      db.exec("INSERT OR IGNORE INTO meta (key, value) VALUES ('crc_from', '0')");
      const crcFrom = db.prepare("SELECT value FROM meta WHERE key = 'crc_from'").pluck().get();
      this.crcFrom = typeof crcFrom === 'string' && /^\d+$/.test(crcFrom) ? BigInt(crcFrom) : 0n;
      this.insert = db.prepare(
        'INSERT INTO journal (position, received_at_ms, module, stream, seq, topic, payload, size_bytes, crc) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)',
      );
      this.insert.safeIntegers(false);
      saveLast = db.prepare("INSERT INTO meta (key, value) VALUES ('last_position', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value");
      const hasSequence = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence'").pluck().get() !== undefined;
      const fromSequence = hasSequence ? db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'journal'").pluck().get() : undefined;
      const fromMeta = db.prepare("SELECT value FROM meta WHERE key = 'last_position'").pluck().get();
      const fromRows = db.prepare('SELECT MAX(position) FROM journal').pluck().get();
      let last = 0n;
      for (const v of [fromSequence, fromMeta, fromRows]) {
        if (v === undefined || v === null) continue;
        if (typeof v !== 'bigint' && !(typeof v === 'string' && /^\d+$/.test(v))) {
          throw new JournalError('Corruption', path, `journal file ${path} is corrupt (open): a damaged last position ${String(v)}`);
        }
        const b = BigInt(v);
        if (b > last) last = b;
      }
      this.s.last = last;
    } catch (err) {
      db.close();
      throw this.wrapOpen(err);
    }
    this.commitGroup = db.transaction((group: Pending[]) => {
      const positions: bigint[] = new Array(group.length);
      let next = Number(this.s.last);
      for (let i = 0; i < group.length; i++) {
        const p = group[i]!;
        const e = p.event;
        next++;
        const received = Math.trunc(e.receivedAtMs);
        const seq = e.seq === undefined ? null : Number(e.seq);
        this.insert.run(next, received, e.module, e.stream, seq, e.topic, e.payload, p.bytes, rowCrc(next, received, e.module, e.stream, seq, e.topic, e.payload));
        positions[i] = BigInt(next);
      }
      saveLast.run(String(next));
      return positions;
    });
  }

  /** Queues one event; resolves with its position once the group commit covering it returned. */
  append(event: JournalEvent): Promise<bigint> {
    if (this.closed) return Promise.reject(new JournalError('Closed', this.path, `journal ${this.path} is closed`));
    if (!Buffer.isBuffer(event.payload)) {
      return Promise.reject(new JournalError('InvalidArgument', this.path, 'append: payload must be a Buffer'));
    }
    return new Promise<bigint>((resolve, reject) => {
      const bytes = event.payload.length + Buffer.byteLength(event.topic) + ROW_OVERHEAD_BYTES;
      this.queue.push({ event, bytes, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Commits everything queued now, in groups bounded by groupEventsMax / groupBytesMax. */
  flush(): void {
    this.flushScheduled = false;
    while (this.queue.length > 0) {
      let n = 0;
      let bytes = 0;
      while (n < this.queue.length && n < this.opts.groupEventsMax) {
        const b = this.queue[n]!.bytes;
        if (n > 0 && bytes + b > this.opts.groupBytesMax) break;
        bytes += b;
        n++;
      }
      const group = this.queue.splice(0, n);
      const t0 = performance.now();
      let positions: bigint[];
      try {
        positions = this.commitGroup(group);
      } catch (err) {
        this.s.failed++;
        const wrapped = this.wrap(err, 'append');
        for (const p of group) p.reject(wrapped);
        continue;
      }
      const ms = performance.now() - t0;
      this.s.commits++;
      this.s.events += group.length;
      this.s.max = Math.max(this.s.max, group.length);
      this.s.msTotal += ms;
      this.s.msMax = Math.max(this.s.msMax, ms);
      for (let i = 0; i < group.length; i++) {
        const pos = positions[i]!;
        if (pos <= this.s.last) throw new Error(`journal invariant: position ${pos} not after ${this.s.last}`);
        this.s.last = pos;
        group[i]!.resolve(pos);
      }
    }
  }

  /** Entries with position > `position`, oldest first, at most `limit`; read page by page. */
  *readAfter(position: bigint, limit: number = Number.MAX_SAFE_INTEGER): IterableIterator<JournalEntry> {
    const page = this.db.prepare(
      'SELECT position, received_at_ms, module, stream, seq, topic, payload, crc FROM journal WHERE position > ? ORDER BY position LIMIT ?',
    );
    let after = position;
    let left = limit;
    while (left > 0) {
      const n = Math.min(left, this.opts.readPageRows);
      let rows: Array<Record<string, unknown>>;
      try {
        rows = page.all(after, BigInt(n)) as Array<Record<string, unknown>>;
      } catch (err) {
        throw this.wrap(err, 'read');
      }
      for (const r of rows) {
        // A flipped bit can change a cell's type (a payload read back as NULL or text, a CRC as
        // NULL): every cell must have the type it was written with, and every row its CRC.
        const bad = (what: string): JournalError =>
          new JournalError('Corruption', this.path, `corruption in ${this.path}: the entry after position ${after} has ${what}`);
        if (typeof r.position !== 'bigint') throw bad('a damaged position');
        if (typeof r.received_at_ms !== 'bigint' || typeof r.module !== 'string' || typeof r.stream !== 'string' || typeof r.topic !== 'string') {
          throw bad(`a damaged field (position ${r.position})`);
        }
        if (r.seq !== null && typeof r.seq !== 'bigint') throw bad(`a damaged sequence (position ${r.position})`);
        if (!Buffer.isBuffer(r.payload)) throw bad(`a damaged payload (position ${r.position})`);
        const entry: JournalEntry = {
          position: r.position,
          receivedAtMs: Number(r.received_at_ms),
          module: r.module,
          stream: r.stream,
          seq: r.seq,
          topic: r.topic,
          payload: r.payload,
        };
        if (typeof r.crc === 'bigint') {
          const want = rowCrc(Number(entry.position), entry.receivedAtMs, entry.module, entry.stream, entry.seq === null ? null : Number(entry.seq), entry.topic, entry.payload);
          if (Number(r.crc) !== want) {
            throw new JournalError('Corruption', this.path, `corruption in ${this.path}: the entry at position ${entry.position} fails its checksum`);
          }
        } else if (r.crc !== null || entry.position >= this.crcFrom) {
          throw bad(`no checksum (position ${entry.position})`);
        }
        after = entry.position;
        yield entry;
      }
      left -= rows.length;
      if (rows.length < n) return;
    }
  }

  setCheckpoint(name: string, position: bigint): void {
    this.run('checkpoint', () =>
      this.db.prepare('INSERT INTO checkpoint (name, position) VALUES (?, ?) ON CONFLICT(name) DO UPDATE SET position = excluded.position').run(name, position),
    );
  }

  getCheckpoint(name: string): bigint | undefined {
    const v = this.run('checkpoint', () => this.db.prepare('SELECT position FROM checkpoint WHERE name = ?').pluck().get(name));
    return typeof v === 'bigint' ? v : undefined;
  }

  /** Highest position ever assigned (0n for an empty journal). */
  lastPosition(): bigint {
    return this.s.last;
  }

  /**
   * Deletes old entries, oldest first: those received more than maxAgeMs ago, then (oldest first)
   * as many as needed to bring the rows' size_bytes total under maxBytes. Never deletes an entry
   * whose position is > keepAfter (e.g. the lowest consumer checkpoint). Works in batches of
   * pruneBatchRows rows per transaction, yielding to the event loop between batches.
   */
  async prune(rule: { maxAgeMs?: number; maxBytes?: number; keepAfter: bigint }): Promise<{ deletedRows: number }> {
    let cutoff = 0n; // delete positions <= cutoff
    if (rule.maxAgeMs !== undefined) {
      const older = this.db
        .prepare('SELECT MAX(position) FROM journal WHERE received_at_ms < ?')
        .pluck()
        .get(BigInt(Math.trunc(this.opts.nowMs() - rule.maxAgeMs)));
      if (typeof older === 'bigint' && older > cutoff) cutoff = older;
    }
    if (rule.maxBytes !== undefined) {
      // The newest position whose suffix (itself and everything newer) exceeds maxBytes goes.
      const over = this.db
        .prepare(
          'SELECT position FROM (SELECT position, SUM(size_bytes) OVER (ORDER BY position DESC) AS suffix FROM journal) WHERE suffix > ? ORDER BY position DESC LIMIT 1',
        )
        .pluck()
        .get(BigInt(Math.trunc(rule.maxBytes)));
      if (typeof over === 'bigint' && over > cutoff) cutoff = over;
    }
    if (cutoff > rule.keepAfter) cutoff = rule.keepAfter;
    const del = this.db.prepare(
      'DELETE FROM journal WHERE position IN (SELECT position FROM journal WHERE position <= ? ORDER BY position LIMIT ?)',
    );
    let deleted = 0;
    for (;;) {
      const info = this.run('prune', () => del.run(cutoff, BigInt(this.opts.pruneBatchRows)));
      deleted += info.changes;
      if (info.changes < this.opts.pruneBatchRows) break;
      await new Promise<void>((r) => setImmediate(r));
    }
    return { deletedRows: deleted };
  }

  /** Bytes of live pages in journal.db (pages freed by prune are reused, so this is what retention controls). */
  bytesUsed(): number {
    return this.run('stat', () => {
      const pageSize = Number(this.db.pragma('page_size', { simple: true }) as bigint);
      const pages = Number(this.db.pragma('page_count', { simple: true }) as bigint);
      const free = Number(this.db.pragma('freelist_count', { simple: true }) as bigint);
      return (pages - free) * pageSize;
    });
  }

  stats(): JournalStats {
    const s = this.s;
    return {
      commits: s.commits,
      events: s.events,
      eventsPerCommitMean: s.commits === 0 ? 0 : s.events / s.commits,
      eventsPerCommitMax: s.max,
      commitMsTotal: s.msTotal,
      commitMsMax: s.msMax,
      lastPosition: s.last,
      failedCommits: s.failed,
    };
  }

  /** Commits what is queued, then closes the connection. Later appends reject with kind 'Closed'. */
  close(): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    this.db.close();
  }

  private run<T>(what: string, f: () => T): T {
    try {
      return f();
    } catch (err) {
      throw this.wrap(err, what);
    }
  }

  /** Every statement run at open is ours and fixed: an SQL error there means a damaged schema. */
  private wrapOpen(err: unknown): JournalError {
    if ((err as { code?: string }).code === 'SQLITE_ERROR') {
      return new JournalError('Corruption', this.path, `journal file ${this.path} is corrupt (open): ${(err as Error).message}`, err);
    }
    return this.wrap(err, 'open');
  }

  private wrap(err: unknown, what: string): JournalError {
    if (err instanceof JournalError) return err;
    const code = (err as { code?: string }).code ?? '';
    const msg = err instanceof Error ? err.message : String(err);
    if (code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_NOTADB' || /unexpected journal format/.test(msg)) {
      return new JournalError('Corruption', this.path, `journal file ${this.path} is corrupt (${what}): ${msg}`, err);
    }
    if (code === 'SQLITE_FULL') {
      return new JournalError('DiskFull', this.path, `journal file ${this.path}: disk full (${what})`, err);
    }
    return new JournalError('IOError', this.path, `journal file ${this.path}: ${what} failed: ${msg}`, err);
  }
}

/** What a `DiskBudget` needs to know about the disk; `statfs` is injectable for tests. */
export interface DiskBudgetOptions {
  journal: Pick<Journal, 'bytesUsed' | 'path'>;
  /** Stop acknowledging when the journal's live bytes reach this. */
  journalBytesMax: number;
  /** Stop acknowledging when the filesystem holding the journal has fewer free bytes than this. */
  diskFreeBytesMin: number;
  /** Re-evaluate at most this often; `full()` is called per event and must stay cheap. */
  checkIntervalMs?: number;
  nowMs?: () => number;
  freeBytes?: (dir: string) => number;
}

/**
 * Says when ingest must stop acknowledging: the journal is over its byte budget, or the disk is
 * nearly full. Once full, it stays full until usage falls below 90% of the budget (hysteresis), so
 * acknowledging does not flap around the limit.
 */
export class DiskBudget {
  private readonly o: Required<DiskBudgetOptions>;
  private checkedAtMs = Number.NEGATIVE_INFINITY;
  private isFull = false;

  constructor(options: DiskBudgetOptions) {
    for (const k of ['journalBytesMax', 'diskFreeBytesMin'] as const) {
      if (!(options[k] >= 0)) throw new JournalError('InvalidArgument', options.journal.path, `DiskBudget ${k}: expected >= 0, got ${options[k]}`);
    }
    this.o = {
      checkIntervalMs: 250,
      nowMs: Date.now,
      freeBytes: (dir: string) => {
        const s = statfsSync(dir);
        return Number(s.bavail) * Number(s.bsize);
      },
      ...options,
    };
  }

  /** True when events must not be acknowledged. */
  full(): boolean {
    const now = this.o.nowMs();
    if (now - this.checkedAtMs < this.o.checkIntervalMs) return this.isFull;
    this.checkedAtMs = now;
    const used = this.o.journal.bytesUsed();
    const free = this.o.freeBytes(dirname(this.o.journal.path));
    const slack = this.isFull ? 0.9 : 1;
    this.isFull = used >= this.o.journalBytesMax * slack || free < this.o.diskFreeBytesMin / slack;
    return this.isFull;
  }
}

/** `tilstand/<site>/events/<module>/<stream...>` → its parts, or undefined for any other topic. */
export function parseEventTopic(topic: string): { site: string; module: string; stream: string } | undefined {
  const l = topic.split('/');
  if (l.length < 5 || l[0] !== 'tilstand' || l[2] !== 'events') return undefined;
  const stream = l.slice(4).join('/');
  if (!l[1] || !l[3] || !stream) return undefined;
  return { site: l[1], module: l[3], stream };
}

/** A sink for broker/source: journals an event topic's payload; resolves when it is on disk. */
export function journalSink(journal: Pick<Journal, 'append'>, nowMs: () => number = Date.now) {
  return async (topic: string, payload: Buffer): Promise<bigint> => {
    const t = parseEventTopic(topic);
    if (!t) throw new JournalError('InvalidArgument', '', `not an event topic: ${topic}`);
    return journal.append({ topic, payload, receivedAtMs: nowMs(), module: t.module, stream: t.stream });
  };
}
