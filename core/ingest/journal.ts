// The ingest journal: every accepted event, appended durably before anyone acknowledges it.
//
// One better-sqlite3 connection to `<data>/journal.db` (WAL mode, synchronous=FULL, so a returned
// commit is on disk). Appends from all connections are GROUP-COMMITTED: `append` queues the event
// and returns a promise; the queue is flushed on the next `setImmediate` (so everything that arrived
// in the same tick, e.g. all PUBLISH packets of one socket read, shares one transaction) and every
// promise of a group resolves after that group's COMMIT returned.
//
// Layout (format 'tilstand-journal-3'): ONE ROW PER GROUP COMMIT in `journal_groups` — the group's
// first position, event count, receive-time range, size, a CRC-32 over the whole row, and one BLOB
// of framed events (see "Group framing" below and TRANSPORT.md, "Journal layout"). A commit is one
// INSERT of one row: no per-event B-tree cell, no per-event meta update. Files written by formats
// 1 and 2 (a row per event in `journal`) are migrated into groups at open, in one transaction.
//
// Concurrency contract: single-threaded (Node's event loop). better-sqlite3 is synchronous, so a
// commit blocks the loop for its fsync; appends that arrive meanwhile wait in the kernel's socket
// buffers and form the next, larger group (see TRANSPORT.md, "group commit").
//
// Invariants:
//   - positions are consecutive, strictly increasing and never reused, even after prune deleted
//     the newest groups: the writer assigns them itself (group row = first position + count), and
//     the high-water mark is max(`meta.last_position`, the newest group's last position);
//     `meta.last_position` is written by every prune batch in the same transaction as its DELETE
//     (and by the migration), so deleting the newest groups never lowers it;
//   - the groups of the table are contiguous: each starts right after the previous one (prune
//     deletes only from the oldest end); a gap or an overlap met while reading is corruption;
//   - a promise returned by `append` resolves only after the COMMIT covering its group returned;
//   - a group never exceeds `groupEventsMax` events or `groupBytesMax` payload+topic bytes
//     (one oversized event is a group of its own);
//   - prune never deletes an event whose position is > keepAfter: a group goes only when all of
//     its events may go.
import Database from 'better-sqlite3';
import { statfsSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { dirname, join } from 'node:path';

export const JOURNAL_FILE_NAME = 'journal.db';
/** The format this code writes. Formats 1 and 2 (a row per event) are migrated at open. */
export const JOURNAL_FORMAT = 'tilstand-journal-3';
const LEGACY_FORMATS = new Set(['tilstand-journal-1', 'tilstand-journal-2']);

// ---- Group framing (the `events` BLOB) ---------------------------------------------------------
//
//   u8      framing version (1)
//   varint  T = number of distinct (topic, module, stream) triples in the group, 1 ≤ T ≤ count
//   T ×     varint len, topic UTF-8 · varint len, module UTF-8 · varint len, stream UTF-8
//   count × varint tag = triple index × 4 + seq kind (0 none, 1 seq ≥ 0, 2 seq < 0, 3 big)
//           varint receivedAtMs − received_min_ms
//           seq kind 1/2: varint |seq| · kind 3: u8 sign (0/1), u64 LE |seq|
//           varint payload length, payload bytes
//
// varint = unsigned LEB128, at most 8 bytes, value ≤ 2^53 − 1. Positions are implicit
// (first_position + index). The framing must consume the blob exactly and yield `event_count`
// events; anything else is corruption (so is a CRC mismatch, checked first).
const FRAMING_VERSION = 1;
/** |receivedAtMs| < this keeps every in-group delta a safe integer (2^52 ms ≈ 142,000 years). */
const MAX_RECEIVED_MS = 2 ** 52;
const MAX_INT64 = 2n ** 63n;
/** Bookkeeping bytes of one group row beside its blob (record header, cell, rowid, overflow chain). */
const GROUP_OVERHEAD_BYTES = 64;
/** Per-event bookkeeping bytes added to payload+topic when bounding a group by groupBytesMax. */
const ROW_OVERHEAD_BYTES = 48;
/** Page size of a new journal.db (an existing file keeps its own). */
const PAGE_BYTES = 16 * 1024;
/** WAL bytes between automatic checkpoints (1000 pages of 4 KiB, 250 of 16 KiB). */
const WAL_CHECKPOINT_BYTES = 4_096_000;

const crcHead = Buffer.alloc(40);
/**
 * CRC-32 of one group row: its header fields (as float64 little-endian, in column order), then the
 * framed events. Exported for tests and tools that build or check rows by hand.
 */
export function groupRowCrc(firstPosition: number, eventCount: number, receivedMinMs: number, receivedMaxMs: number, sizeBytes: number, events: Uint8Array): number {
  crcHead.writeDoubleLE(firstPosition, 0);
  crcHead.writeDoubleLE(eventCount, 8);
  crcHead.writeDoubleLE(receivedMinMs, 16);
  crcHead.writeDoubleLE(receivedMaxMs, 24);
  crcHead.writeDoubleLE(sizeBytes, 32);
  return crc32(events, crc32(crcHead));
}

/** CRC-32 of one format-2 row (a row per event): every field, then the payload. Checked when migrating. */
function legacyRowCrc(position: bigint, receivedAtMs: bigint, module: string, stream: string, seq: bigint | null, topic: string, payload: Buffer): number {
  const head = crc32(`${position}\u0000${receivedAtMs}\u0000${module}\u0000${stream}\u0000${seq ?? ''}\u0000${topic}\u0000`);
  return crc32(payload, head);
}

function putVarint(buf: Buffer, o: number, v: number): number {
  while (v > 0x7fffffff) {
    buf[o++] = (v % 128) | 0x80;
    v = Math.floor(v / 128);
  }
  while (v > 0x7f) {
    buf[o++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  buf[o++] = v;
  return o;
}

/** One event as the encoder takes it (validated and normalized by `append` or the migration). */
interface Rec {
  topic: string;
  module: string;
  stream: string;
  received: number;
  /** A safe integer as a number, a larger one as a bigint (|seq| < 2^63), or null. */
  seq: number | bigint | null;
  payload: Buffer;
}

const tripleKey = (r: Rec) => `${r.topic.length}:${r.topic}${r.module.length}:${r.module}${r.stream}`;

/** Builds group blobs in a reused scratch buffer (better-sqlite3 copies a bound blob). */
class GroupEncoder {
  private buf: Buffer = Buffer.allocUnsafe(64 * 1024);
  private idx = new Int32Array(1024);

  /** Frames recs[start, start + n); the blob is a view of the scratch buffer, valid until the next call. */
  encode(recs: ArrayLike<Rec>, start: number, n: number): { blob: Buffer; min: number; max: number } {
    if (this.idx.length < n) this.idx = new Int32Array(n);
    const idx = this.idx;
    const topics: string[] = [];
    const modules: string[] = [];
    const streams: string[] = [];
    let map: Map<string, number> | undefined;
    let last = -1;
    let min = Infinity;
    let max = -Infinity;
    let bound = 16;
    for (let k = 0; k < n; k++) {
      const r = recs[start + k]!;
      let t = -1;
      if (last >= 0 && topics[last] === r.topic && modules[last] === r.module && streams[last] === r.stream) t = last;
      else if (map === undefined) {
        for (let x = 0; x < topics.length; x++) {
          if (topics[x] === r.topic && modules[x] === r.module && streams[x] === r.stream) {
            t = x;
            break;
          }
        }
      } else t = map.get(tripleKey(r)) ?? -1;
      if (t < 0) {
        t = topics.length;
        topics.push(r.topic);
        modules.push(r.module);
        streams.push(r.stream);
        bound += 3 * (r.topic.length + r.module.length + r.stream.length) + 15;
        if (map !== undefined) map.set(tripleKey(r), t);
        else if (topics.length === 16) {
          map = new Map();
          for (let x = 0; x < topics.length; x++) map.set(tripleKey({ topic: topics[x]!, module: modules[x]!, stream: streams[x]! } as Rec), x);
        }
      }
      last = t;
      idx[k] = t;
      if (r.received < min) min = r.received;
      if (r.received > max) max = r.received;
      bound += r.payload.length + 40;
    }
    if (this.buf.length < bound) this.buf = Buffer.allocUnsafe(Math.max(bound, this.buf.length * 2));
    const buf = this.buf;
    let o = 0;
    buf[o++] = FRAMING_VERSION;
    o = putVarint(buf, o, topics.length);
    for (let x = 0; x < topics.length; x++) {
      for (const s of [topics[x]!, modules[x]!, streams[x]!]) {
        o = putVarint(buf, o, Buffer.byteLength(s));
        o += buf.write(s, o, 'utf8');
      }
    }
    for (let k = 0; k < n; k++) {
      const r = recs[start + k]!;
      const seq = r.seq;
      if (seq === null) {
        o = putVarint(buf, o, idx[k]! * 4);
        o = putVarint(buf, o, r.received - min);
      } else if (typeof seq === 'number') {
        o = putVarint(buf, o, idx[k]! * 4 + (seq >= 0 ? 1 : 2));
        o = putVarint(buf, o, r.received - min);
        o = putVarint(buf, o, seq >= 0 ? seq : -seq);
      } else {
        o = putVarint(buf, o, idx[k]! * 4 + 3);
        o = putVarint(buf, o, r.received - min);
        buf[o++] = seq < 0n ? 1 : 0;
        buf.writeBigUInt64LE(seq < 0n ? -seq : seq, o);
        o += 8;
      }
      const p = r.payload;
      o = putVarint(buf, o, p.length);
      buf.set(p, o);
      o += p.length;
    }
    const blob = buf.subarray(0, o);
    // A rare huge group (one oversized event) must not pin its scratch buffer forever.
    if (this.buf.length > 64 * 1024 * 1024) this.buf = Buffer.allocUnsafe(64 * 1024);
    return { blob, min, max };
  }
}

/** A cursor over the events of one group whose CRC was checked; every framing error is corruption. */
/** `1 event`, `2 events`: a damaged group's counts as the corruption error says them. */
const counted = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? '' : 's'}`;

class GroupCursor {
  private pos = 1;
  private readonly topics: string[] = [];
  private readonly modules: string[] = [];
  private readonly streams: string[] = [];
  topic = '';
  module = '';
  stream = '';
  received = 0;
  seq: bigint | null = null;
  payloadStart = 0;
  payloadEnd = 0;

  constructor(
    readonly blob: Buffer,
    private readonly count: number,
    private readonly min: number,
    private readonly max: number,
    private readonly fail: (what: string) => JournalError,
  ) {
    if (blob.length < 2 || blob[0] !== FRAMING_VERSION) throw fail(`an unknown framing version ${blob[0]}`);
    const nt = this.varint();
    if (nt < 1 || nt > count) throw fail(`${counted(nt, 'topic')} for ${counted(count, 'event')}`);
    for (let x = 0; x < nt; x++) {
      this.topics.push(this.str());
      this.modules.push(this.str());
      this.streams.push(this.str());
    }
  }

  private varint(): number {
    const b = this.blob;
    let p = this.pos;
    let v = 0;
    let mul = 1;
    for (let i = 0; ; i++) {
      if (p >= b.length) throw this.fail('a frame that overruns the group');
      const x = b[p++]!;
      v += (x & 0x7f) * mul;
      if (x < 0x80) break;
      if (i === 7) throw this.fail('an overlong number in a frame');
      mul *= 128;
    }
    if (v > Number.MAX_SAFE_INTEGER) throw this.fail('an out-of-range number in a frame');
    this.pos = p;
    return v;
  }

  private str(): string {
    const len = this.varint();
    const end = this.pos + len;
    if (end > this.blob.length) throw this.fail('a string that overruns the group');
    const s = this.blob.toString('utf8', this.pos, end);
    this.pos = end;
    return s;
  }

  /** Decodes the next event into the public fields. */
  next(): void {
    const tag = this.varint();
    const t = Math.floor(tag / 4);
    const kind = tag % 4;
    if (t >= this.topics.length) throw this.fail(`a frame naming topic ${t} of ${this.topics.length}`);
    this.topic = this.topics[t]!;
    this.module = this.modules[t]!;
    this.stream = this.streams[t]!;
    const received = this.min + this.varint();
    if (received > this.max) throw this.fail('a receive time outside the group range');
    this.received = received;
    if (kind === 0) this.seq = null;
    else if (kind === 1) this.seq = BigInt(this.varint());
    else if (kind === 2) this.seq = -BigInt(this.varint());
    else {
      if (this.pos + 9 > this.blob.length) throw this.fail('a sequence that overruns the group');
      const sign = this.blob[this.pos]!;
      if (sign > 1) throw this.fail('a damaged sequence sign');
      const mag = this.blob.readBigUInt64LE(this.pos + 1);
      this.seq = sign === 1 ? -mag : mag;
      this.pos += 9;
    }
    const len = this.varint();
    const end = this.pos + len;
    if (end > this.blob.length) throw this.fail('a payload that overruns the group');
    this.payloadStart = this.pos;
    this.payloadEnd = end;
    this.pos = end;
  }

  /** After `count` events: the framing must have consumed the blob exactly. */
  end(): void {
    if (this.pos !== this.blob.length) throw this.fail(`${counted(this.blob.length - this.pos, 'byte')} after its ${counted(this.count, 'event')}`);
  }
}

// ---- Public types ------------------------------------------------------------------------------

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
  /**
   * Events per page read by `readAfter` (a page is the groups that start within the next this-many
   * positions, so at most this + one group); the connection is never held between pages.
   */
  readPageRows?: number;
  /** Events deleted per transaction by `prune` (at least one whole group); appends can run between two batches. */
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

interface Pending extends Rec {
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

// ---- Schema ------------------------------------------------------------------------------------

/** No NOT NULL on journal_groups: every cell's type is checked when read (a flipped bit can change it anyway). */
const CREATE_GROUPS =
  'CREATE TABLE journal_groups (first_position INTEGER PRIMARY KEY, event_count INTEGER, received_min_ms INTEGER, received_max_ms INTEGER, size_bytes INTEGER, crc INTEGER, events BLOB)';
const SCHEMA_V3 = `
${CREATE_GROUPS};
CREATE TABLE IF NOT EXISTS checkpoint (name TEXT PRIMARY KEY, position INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
`;
const TABLES_V3 = 'checkpoint,journal_groups,meta';
const TABLES_LEGACY = 'checkpoint,journal,meta';
const LEGACY_COLUMNS = 'position,received_at_ms,module,stream,seq,topic,payload,size_bytes';

/** `name type notnull pk` of every column: a flipped bit in the schema text shows up here. */
function columnSignature(db: Database.Database, table: string): string {
  const cols = db.prepare(`PRAGMA table_info(${table})`).all() as Array<{ name: string; type: string; notnull: unknown; pk: unknown }>;
  return cols.map((c) => `${c.name} ${c.type} ${String(c.notnull)} ${String(c.pk)}`).join(', ');
}

let expectedSignatures: Record<string, string> | undefined;
function expectedSignature(table: string): string {
  if (!expectedSignatures) {
    const mem = new Database(':memory:');
    try {
      mem.defaultSafeIntegers(true);
      mem.exec(SCHEMA_V3);
      expectedSignatures = Object.fromEntries(['journal_groups', 'checkpoint', 'meta'].map((t) => [t, columnSignature(mem, t)]));
    } finally {
      mem.close();
    }
  }
  return expectedSignatures[table]!;
}

const GROUP_COLUMNS = 'first_position, event_count, received_min_ms, received_max_ms, size_bytes, crc, events';

interface GroupRow {
  first: number;
  count: number;
  min: number;
  max: number;
  blob: Buffer;
}

export class Journal {
  readonly path: string;
  private readonly db: Database.Database;
  private readonly opts: Required<JournalOptions>;
  private readonly encoder = new GroupEncoder();
  private readonly st: {
    insert: Database.Statement;
    page: Database.Statement;
    startGroup: Database.Statement;
    nextGroup: Database.Statement;
    groupBefore: Database.Statement;
    saveLast: Database.Statement;
  };
  private readonly pruneBatch: (cutoff: number) => { events: number; more: boolean; through: number };
  /**
   * Groups that end at or before this position may be followed by a gap: rows migrated from a
   * format-1/2 file with gaps, or positions skipped by `continueAfter`.
   */
  private legacyGapsTo = 0;
  /**
   * Every position at or below this was deleted by prune (`meta.pruned_through`): a reader that
   * finds no group holding its start takes the positions before the first group it finds for
   * pruned only up to here. Beyond it a missing group is corruption.
   */
  private prunedThrough = 0;
  private queue: Pending[] = [];
  private flushScheduled = false;
  private closed = false;
  private lastTopic = '';
  private lastTopicBytes = 0;
  private s = { commits: 0, events: 0, max: 0, msTotal: 0, msMax: 0, failed: 0, last: 0 };

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
      // A new file gets 16 KiB pages: a group of 1,000 bench events (~240 KB) is 15 WAL frames
      // instead of 59, each frame two write calls and one more at the checkpoint, so a commit costs
      // a quarter to a third less system time (TRANSPORT.md, "Journal layout"). Ignored for an
      // existing file, which keeps the page size it was created with.
      db.pragma(`page_size = ${PAGE_BYTES}`);
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      // Checkpoint (copy WAL pages into journal.db) every ~4 MB, ~16 groups of 1000 events: every
      // byte is written twice (WAL, then the file) whatever the interval, so a longer one only
      // makes the commit that runs the checkpoint slower (TRANSPORT.md, "Journal layout").
      const pageBytes = Number(db.pragma('page_size', { simple: true }) as bigint);
      db.pragma(`wal_autocheckpoint = ${Math.max(1, Math.round(WAL_CHECKPOINT_BYTES / pageBytes))}`);
      // A file that holds tables must hold exactly ours: a flipped bit in a table's name would
      // otherwise make CREATE TABLE start an empty journal beside the lost one.
      const objects = db.prepare("SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY name").all() as Array<{ type: string; name: string }>;
      const others = objects.filter((o) => o.type !== 'table');
      if (others.length > 0) throw this.corruptAtOpen(`unexpected schema objects ${others.map((o) => `${o.type} ${o.name}`).join(',')}`);
      const tables = objects.map((o) => o.name).join(',');
      if (tables === '') {
        db.transaction(() => {
          db!.exec(SCHEMA_V3);
          db!.prepare("INSERT INTO meta (key, value) VALUES ('format', ?)").run(JOURNAL_FORMAT);
        })();
      } else if (tables === TABLES_LEGACY) {
        this.migrate(db);
      } else if (tables !== TABLES_V3) {
        throw this.corruptAtOpen(`unexpected tables ${tables}`);
      }
      for (const t of ['journal_groups', 'checkpoint', 'meta']) {
        const got = columnSignature(db, t);
        if (got !== expectedSignature(t)) throw this.corruptAtOpen(`unexpected ${t} columns ${got}`);
      }
      const format = db.prepare("SELECT value FROM meta WHERE key = 'format'").pluck().get();
      if (format !== JOURNAL_FORMAT) throw new Error(`unexpected journal format ${String(format)}`);
      const gaps = db.prepare("SELECT value FROM meta WHERE key = 'legacy_gaps_to'").pluck().get();
      if (gaps !== undefined) this.legacyGapsTo = this.metaNumber(gaps, 'legacy_gaps_to');

      // The high-water mark: meta (written by prune and by the migration; replay's scratch journal
      // sets it too), sqlite_sequence (a migrated format-1 file, where replay may still write it),
      // and the newest group, whose CRC and framing are checked here so a damaged last row can
      // never make positions be reused.
      let last = 0;
      const hasSequence = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence'").pluck().get() !== undefined;
      const fromSequence = hasSequence ? db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'journal'").pluck().get() : undefined;
      const fromMeta = db.prepare("SELECT value FROM meta WHERE key = 'last_position'").pluck().get();
      for (const v of [fromSequence, fromMeta]) {
        if (v === undefined || v === null) continue;
        last = Math.max(last, this.metaNumber(v, 'last position'));
      }
      const newest = db.prepare(`SELECT ${GROUP_COLUMNS} FROM journal_groups ORDER BY first_position DESC LIMIT 1`).get() as Record<string, unknown> | undefined;
      if (newest !== undefined) {
        const g = this.checkGroup(newest, undefined);
        const cur = new GroupCursor(g.blob, g.count, g.min, g.max, this.corruptGroup(g.first));
        for (let k = 0; k < g.count; k++) cur.next();
        cur.end();
        last = Math.max(last, g.first + g.count - 1);
      }
      this.s.last = last;
      // What prune removed. A file from before this was kept takes everything before its oldest
      // group for pruned (and keeps that from now on); an empty one, everything up to its last position.
      // So does a file an earlier version pruned since (a rollback of the install, then this version
      // again): it knows nothing of pruned_through, and each of its prune batches rewrote only
      // last_position, so pruned_through counts only beside the last_position it was written with
      // (`pruned_through_last`). Without this, its prune read as a lost group (docs/operations.md, "Upgrading").
      const pruned = db.prepare("SELECT value FROM meta WHERE key = 'pruned_through'").pluck().get();
      const prunedBeside = db.prepare("SELECT value FROM meta WHERE key = 'pruned_through_last'").pluck().get();
      if (pruned !== undefined && prunedBeside === (fromMeta ?? '')) this.prunedThrough = this.metaNumber(pruned, 'pruned position');
      else {
        const oldest = db.prepare('SELECT MIN(first_position) FROM journal_groups').pluck().get();
        if (oldest === null || oldest === undefined) this.prunedThrough = last;
        else {
          this.prunedThrough = this.metaNumber(oldest, 'oldest group position') - 1;
          const save = db.prepare("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value");
          db.transaction(() => {
            save.run('pruned_through', String(this.prunedThrough));
            save.run('pruned_through_last', String(fromMeta ?? ''));
          })();
        }
      }

      this.st = {
        insert: db.prepare(`INSERT INTO journal_groups (${GROUP_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`),
        page: db.prepare(`SELECT ${GROUP_COLUMNS} FROM journal_groups WHERE first_position >= ? AND first_position < ? ORDER BY first_position`),
        startGroup: db.prepare('SELECT MAX(first_position) FROM journal_groups WHERE first_position <= ?').pluck(),
        nextGroup: db.prepare('SELECT MIN(first_position) FROM journal_groups WHERE first_position >= ?').pluck(),
        groupBefore: db.prepare('SELECT 1 FROM journal_groups WHERE first_position < ? LIMIT 1').pluck(),
        saveLast: db.prepare("INSERT INTO meta (key, value) VALUES ('last_position', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value"),
      };
      const batch = db.prepare('SELECT first_position, event_count FROM journal_groups WHERE first_position <= ? ORDER BY first_position LIMIT ?');
      const del = db.prepare('DELETE FROM journal_groups WHERE first_position >= ? AND first_position <= ?');
      const savePruned = db.prepare("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value");
      this.pruneBatch = db.transaction((cutoff: number) => {
        const rows = batch.all(cutoff, this.opts.pruneBatchRows) as Array<{ first_position: unknown; event_count: unknown }>;
        let events = 0;
        let lo = -1;
        let hi = -1;
        let through = -1;
        let more = rows.length === this.opts.pruneBatchRows;
        for (const r of rows) {
          if (typeof r.first_position !== 'bigint' || typeof r.event_count !== 'bigint') {
            throw new JournalError('Corruption', this.path, `corruption in ${this.path}: a group header with damaged fields (prune)`);
          }
          const first = Number(r.first_position);
          const count = Number(r.event_count);
          if (first + count - 1 > cutoff) {
            more = false;
            break;
          }
          if (events > 0 && events + count > this.opts.pruneBatchRows) {
            more = true;
            break;
          }
          if (lo < 0) lo = first;
          hi = first;
          through = first + count - 1;
          events += count;
        }
        if (events === 0) return { events: 0, more: false, through: this.prunedThrough };
        this.st.saveLast.run(String(this.s.last));
        const prunedThrough = Math.max(this.prunedThrough, through);
        savePruned.run('pruned_through', String(prunedThrough));
        savePruned.run('pruned_through_last', String(this.s.last));
        del.run(lo, hi);
        return { events, more, through: prunedThrough };
      });
    } catch (err) {
      db?.close();
      throw this.wrapOpen(err);
    }
    this.db = db;
  }

  /** Queues one event; resolves with its position once the group commit covering it returned. */
  append(event: JournalEvent): Promise<bigint> {
    if (this.closed) return Promise.reject(new JournalError('Closed', this.path, `journal ${this.path} is closed`));
    const { payload, topic, module, stream } = event;
    if (!Buffer.isBuffer(payload)) {
      return Promise.reject(new JournalError('InvalidArgument', this.path, 'append: payload must be a Buffer'));
    }
    if (typeof topic !== 'string' || typeof module !== 'string' || typeof stream !== 'string') {
      return Promise.reject(new JournalError('InvalidArgument', this.path, 'append: topic, module and stream must be strings'));
    }
    const received = Math.trunc(event.receivedAtMs);
    if (!(received > -MAX_RECEIVED_MS && received < MAX_RECEIVED_MS)) {
      return Promise.reject(new JournalError('InvalidArgument', this.path, `append: receivedAtMs: expected a number of milliseconds within ±2^52, got ${event.receivedAtMs}`));
    }
    let seq: number | bigint | null = null;
    const s = event.seq;
    if (s !== undefined && s !== null) {
      if (typeof s === 'number' && Number.isSafeInteger(s)) seq = s;
      else if ((typeof s === 'number' && Number.isInteger(s)) || typeof s === 'bigint') {
        const b = BigInt(s);
        if (b >= MAX_INT64 || b < -MAX_INT64) return Promise.reject(new JournalError('InvalidArgument', this.path, `append: seq: expected a 64-bit integer, got ${s}`));
        seq = b >= BigInt(Number.MIN_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b;
      } else return Promise.reject(new JournalError('InvalidArgument', this.path, `append: seq: expected an integer, got ${String(s)}`));
    }
    if (topic !== this.lastTopic) {
      this.lastTopic = topic;
      this.lastTopicBytes = Buffer.byteLength(topic);
    }
    const bytes = payload.length + this.lastTopicBytes + ROW_OVERHEAD_BYTES;
    return new Promise<bigint>((resolve, reject) => {
      this.queue.push({ topic, module, stream, received, seq, payload, bytes, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** Commits everything queued now, in groups bounded by groupEventsMax / groupBytesMax. */
  flush(): void {
    this.flushScheduled = false;
    const q = this.queue;
    if (q.length === 0) return;
    this.queue = [];
    let i = 0;
    try {
      while (i < q.length) {
        let n = 0;
        let bytes = 0;
        while (i + n < q.length && n < this.opts.groupEventsMax) {
          const b = q[i + n]!.bytes;
          if (n > 0 && bytes + b > this.opts.groupBytesMax) break;
          bytes += b;
          n++;
        }
        const start = i;
        i += n;
        const t0 = performance.now();
        const first = this.s.last + 1;
        try {
          this.insertGroup(q, start, n, first);
        } catch (err) {
          this.s.failed++;
          const wrapped = this.wrap(err, 'append');
          for (let k = start; k < start + n; k++) q[k]!.reject(wrapped);
          continue;
        }
        const ms = performance.now() - t0;
        this.s.commits++;
        this.s.events += n;
        this.s.max = Math.max(this.s.max, n);
        this.s.msTotal += ms;
        this.s.msMax = Math.max(this.s.msMax, ms);
        this.s.last = first + n - 1;
        for (let k = 0; k < n; k++) q[start + k]!.resolve(BigInt(first + k));
      }
    } finally {
      if (i < q.length) this.queue = q.slice(i).concat(this.queue);
    }
  }

  /** One group = one row = one autocommit INSERT (one WAL fsync). */
  private insertGroup(recs: ArrayLike<Rec>, start: number, n: number, first: number): void {
    const { blob, min, max } = this.encoder.encode(recs, start, n);
    const size = blob.length + GROUP_OVERHEAD_BYTES;
    this.st.insert.run(first, n, min, max, size, groupRowCrc(first, n, min, max, size, blob), blob);
  }

  /** Entries with position > `position`, oldest first, at most `limit`; read page by page. */
  *readAfter(position: bigint, limit: number = Number.MAX_SAFE_INTEGER): IterableIterator<JournalEntry> {
    let left = limit;
    if (!(left > 0) || position >= BigInt(Number.MAX_SAFE_INTEGER)) return;
    const after = position < -1n ? -1 : Number(position);
    const span = this.opts.readPageRows;
    const start = this.run('read', () => this.st.startGroup.get(after + 1));
    const noStartGroup = start === null || start === undefined;
    let lo = noStartGroup ? after + 1 : this.headerNumber(start, after);
    /** The position right after the last group this call read (undefined before the first). */
    let expected: number | undefined;
    while (left > 0) {
      const rows = this.run('read', () => this.st.page.all(lo, lo + span)) as Array<Record<string, unknown>>;
      if (rows.length === 0) {
        const next = this.run('read', () => this.st.nextGroup.get(lo));
        if (next === null || next === undefined) return;
        lo = this.headerNumber(next, after);
        continue;
      }
      for (let ri = 0; ri < rows.length; ri++) {
        const r = rows[ri]!;
        const first = this.headerNumber(r.first_position, after);
        const count = this.headerNumber(r.event_count, after);
        if (count < 1) throw this.corrupt(`the group at position ${first} has a damaged event count`);
        if (expected === undefined && noStartGroup) {
          // No group holds the start, and the first one found begins after a position prune never
          // deleted (it keeps the group holding keepAfter+1 whole): that group is lost.
          const gone = Math.max(after, this.prunedThrough, this.legacyGapsTo);
          if (first - 1 > gone) throw this.corrupt(`the group holding position ${gone + 1} is missing (pruned through ${this.prunedThrough}; the next group starts at ${first})`);
        }
        if (expected !== undefined && first !== expected) {
          // Prune deletes only from the oldest end: a group that does not continue the previous one
          // is corruption, unless prune removed everything before it while this reader waited
          // between two pages (then no group before `expected` is left).
          const pruned = ri === 0 && first > expected && this.run('read', () => this.st.groupBefore.get(expected)) === undefined;
          // A gap migrated rows left (format 1/2 had holes) lies wholly inside the legacy range; one
          // that reaches into the groups written since is a lost group.
          const legacyGap = first > expected && first - 1 <= this.legacyGapsTo;
          if (!pruned && !legacyGap) throw this.corrupt(`a group at position ${first} where position ${expected} was expected`);
        }
        expected = first + count;
        if (first + count - 1 <= after) continue; // wholly before the start: not returned, not decoded
        const g = this.checkGroup(r, after);
        const cur = new GroupCursor(g.blob, g.count, g.min, g.max, this.corruptGroup(g.first));
        for (let k = 0; k < g.count; k++) {
          cur.next();
          const pos = g.first + k;
          if (pos <= after) continue;
          const payload = Buffer.allocUnsafe(cur.payloadEnd - cur.payloadStart);
          g.blob.copy(payload, 0, cur.payloadStart, cur.payloadEnd);
          yield { position: BigInt(pos), receivedAtMs: cur.received, module: cur.module, stream: cur.stream, seq: cur.seq, topic: cur.topic, payload };
          if (--left <= 0) return;
        }
        cur.end();
      }
      lo = expected!;
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

  /** Every position at or below this was deleted by prune (0n when nothing was): the journal holds every event after it. */
  prunedThroughPosition(): bigint {
    return BigInt(this.prunedThrough);
  }

  /** Highest position ever assigned (0n for an empty journal). */
  lastPosition(): bigint {
    return BigInt(this.s.last);
  }

  /**
   * Makes the next position at least `position` + 1, for a journal that lacks positions its
   * consumers already hold: a fresh journal.db under tables restored from HQ, or a journal.db
   * restored from an older copy. Numbered from 1 again, its new events would be taken for ones the
   * tables hold. Raises `meta.last_position` and marks the gap up to it as history, not damage
   * (`legacy_gaps_to`), in one transaction. A position at or below the last one changes nothing.
   * REQUIRES: nothing queued (no append is waiting for its group).
   */
  continueAfter(position: bigint): void {
    if (this.queue.length > 0) throw new Error('assertion failed: continueAfter with appends queued');
    if (position > BigInt(Number.MAX_SAFE_INTEGER)) throw new JournalError('InvalidArgument', this.path, `continueAfter: expected a position ≤ 2^53 − 1, got ${position}`);
    const p = Number(position);
    if (p <= this.s.last) return;
    const gapsTo = Math.max(this.legacyGapsTo, p);
    this.run('continueAfter', () =>
      this.db.transaction(() => {
        this.st.saveLast.run(String(p));
        this.db.prepare("INSERT INTO meta (key, value) VALUES ('legacy_gaps_to', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(String(gapsTo));
        // pruned_through stands beside the last_position it was written with (open, above).
        this.db.prepare("UPDATE meta SET value = ? WHERE key = 'pruned_through_last'").run(String(p));
      })(),
    );
    this.s.last = p;
    this.legacyGapsTo = gapsTo;
  }

  /**
   * Deletes old groups, oldest first: through the newest group whose events were all received more
   * than maxAgeMs ago, then (oldest first) as many as needed to bring the groups' size_bytes total
   * under maxBytes. Never deletes an event whose position is > keepAfter (e.g. the lowest consumer
   * checkpoint): a group goes only when all of its events may go. Works in batches of about
   * pruneBatchRows events (whole groups) per transaction, yielding to the event loop between
   * batches. `deletedRows` counts the events deleted.
   */
  async prune(rule: { maxAgeMs?: number; maxBytes?: number; keepAfter: bigint }): Promise<{ deletedRows: number }> {
    let cutoff = 0; // delete groups that end at or before cutoff
    if (rule.maxAgeMs !== undefined) {
      const older = this.run('prune', () =>
        this.db
          .prepare('SELECT MAX(first_position + event_count - 1) FROM journal_groups WHERE received_max_ms < ?')
          .pluck()
          .get(BigInt(Math.trunc(this.opts.nowMs() - rule.maxAgeMs!))),
      );
      if (typeof older === 'bigint' && Number(older) > cutoff) cutoff = Number(older);
    }
    if (rule.maxBytes !== undefined) {
      // The newest group whose suffix (itself and everything newer) exceeds maxBytes goes.
      const over = this.run('prune', () =>
        this.db
          .prepare(
            'SELECT first_position + event_count - 1 FROM (SELECT first_position, event_count, SUM(size_bytes) OVER (ORDER BY first_position DESC) AS suffix FROM journal_groups) WHERE suffix > ? ORDER BY first_position DESC LIMIT 1',
          )
          .pluck()
          .get(BigInt(Math.trunc(rule.maxBytes!))),
      );
      if (typeof over === 'bigint' && Number(over) > cutoff) cutoff = Number(over);
    }
    if (BigInt(cutoff) > rule.keepAfter) cutoff = Number(rule.keepAfter);
    let deleted = 0;
    if (cutoff <= 0) return { deletedRows: 0 };
    for (;;) {
      const r = this.run('prune', () => this.pruneBatch(cutoff));
      this.prunedThrough = r.through;
      deleted += r.events;
      if (!r.more) break;
      await new Promise<void>((res) => setImmediate(res));
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
      lastPosition: BigInt(s.last),
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

  // ---- Reading and checking rows ---------------------------------------------------------------

  /** Every cell of a group row must have the type it was written with, and the row its CRC. */
  private checkGroup(r: Record<string, unknown>, after: number | undefined): GroupRow {
    const bad = (what: string): JournalError => this.corrupt(`${after === undefined ? 'the newest group' : `the group after position ${after}`} has ${what}`);
    const { first_position: f, event_count: c, received_min_ms: mn, received_max_ms: mx, size_bytes: sz, crc, events } = r;
    if (typeof f !== 'bigint' || f < 1n || f > BigInt(Number.MAX_SAFE_INTEGER)) throw bad('a damaged position');
    if (typeof c !== 'bigint' || c < 1n || c > 0xffffffffn) throw bad(`a damaged event count (position ${f})`);
    if (typeof mn !== 'bigint' || typeof mx !== 'bigint' || mn > mx || mn <= -BigInt(MAX_RECEIVED_MS) || mx >= BigInt(MAX_RECEIVED_MS)) {
      throw bad(`a damaged receive-time range (position ${f})`);
    }
    if (typeof sz !== 'bigint' || sz < 0n || sz > BigInt(Number.MAX_SAFE_INTEGER)) throw bad(`a damaged size (position ${f})`);
    if (!Buffer.isBuffer(events)) throw bad(`damaged events (position ${f})`);
    if (typeof crc !== 'bigint') throw bad(`no checksum (position ${f})`);
    const g: GroupRow = { first: Number(f), count: Number(c), min: Number(mn), max: Number(mx), blob: events };
    if (crc !== BigInt(groupRowCrc(g.first, g.count, g.min, g.max, Number(sz), events))) {
      throw this.corrupt(`the group at position ${f} fails its checksum`);
    }
    return g;
  }

  private headerNumber(v: unknown, after: number): number {
    if (typeof v !== 'bigint' || v < 0n || v > BigInt(Number.MAX_SAFE_INTEGER)) throw this.corrupt(`the group after position ${after} has a damaged header`);
    return Number(v);
  }

  private metaNumber(v: unknown, what: string): number {
    if ((typeof v !== 'bigint' && !(typeof v === 'string' && /^\d{1,16}$/.test(v))) || BigInt(v) > BigInt(Number.MAX_SAFE_INTEGER)) {
      throw this.corruptAtOpen(`a damaged ${what} ${String(v)}`);
    }
    return Number(v);
  }

  private corrupt(what: string): JournalError {
    return new JournalError('Corruption', this.path, `corruption in ${this.path}: ${what}`);
  }

  private corruptGroup(first: number): (what: string) => JournalError {
    return (what) => this.corrupt(`the group at position ${first} has ${what}`);
  }

  private corruptAtOpen(what: string): JournalError {
    return new JournalError('Corruption', this.path, `journal file ${this.path} is corrupt (open): ${what}`);
  }

  // ---- Migration of format 1/2 files -----------------------------------------------------------

  /**
   * Rewrites the rows of a format-1/2 file (a row per event in `journal`) as groups, in ONE
   * transaction: every row is checked as the old reader did (cell types; the CRC from `crc_from` on)
   * and a damaged one refuses the file, leaving it untouched. Groups follow groupEventsMax /
   * groupBytesMax and never span a gap in the positions.
   */
  private migrate(db: Database.Database): void {
    const columns = db.prepare('PRAGMA table_info(journal)').all() as Array<{ name: string }>;
    const names = columns.map((c) => c.name).filter((n) => n !== 'crc').join(',');
    if (names !== LEGACY_COLUMNS) throw this.corruptAtOpen(`unexpected journal columns ${names}`);
    const hasCrc = columns.some((c) => c.name === 'crc');
    const format = db.prepare("SELECT value FROM meta WHERE key = 'format'").pluck().get();
    if (typeof format !== 'string' || !LEGACY_FORMATS.has(format)) throw new Error(`unexpected journal format ${String(format)}`);
    let crcFrom: bigint | undefined; // undefined: no row carries a CRC (the column never existed)
    if (hasCrc) {
      const v = db.prepare("SELECT value FROM meta WHERE key = 'crc_from'").pluck().get();
      crcFrom = typeof v === 'string' && /^\d+$/.test(v) ? BigInt(v) : 0n;
    }
    const hasSequence = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence'").pluck().get() !== undefined;
    const fromSequence = hasSequence ? db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'journal'").pluck().get() : undefined;
    const fromMeta = db.prepare("SELECT value FROM meta WHERE key = 'last_position'").pluck().get();
    let last = 0;
    for (const v of [fromSequence, fromMeta]) if (v !== undefined && v !== null) last = Math.max(last, this.metaNumber(v, 'last position'));

    const page = db.prepare(
      `SELECT position, received_at_ms, module, stream, seq, topic, payload${hasCrc ? ', crc' : ''} FROM journal WHERE position > ? ORDER BY position LIMIT 1000`,
    );
    db.transaction(() => {
      db.exec(CREATE_GROUPS);
      const insert = db.prepare(`INSERT INTO journal_groups (${GROUP_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`);
      const group: Rec[] = [];
      let groupFirst = 0;
      let groupBytes = 0;
      let prev = 0;
      let gapsTo = 0;
      const emit = () => {
        if (group.length === 0) return;
        const { blob, min, max } = this.encoder.encode(group, 0, group.length);
        const size = blob.length + GROUP_OVERHEAD_BYTES;
        insert.run(groupFirst, group.length, min, max, size, groupRowCrc(groupFirst, group.length, min, max, size, blob), blob);
        group.length = 0;
        groupBytes = 0;
      };
      let after = -1n;
      for (;;) {
        const rows = page.all(after) as Array<Record<string, unknown>>;
        for (const r of rows) {
          const bad = (what: string): JournalError => this.corruptAtOpen(`a format-1/2 row after position ${after} has ${what}`);
          const { position, received_at_ms: rec, module, stream, seq, topic, payload, crc } = r;
          if (typeof position !== 'bigint' || position < 1n || position > BigInt(Number.MAX_SAFE_INTEGER)) throw bad('a damaged position');
          if (typeof rec !== 'bigint' || typeof module !== 'string' || typeof stream !== 'string' || typeof topic !== 'string') throw bad(`a damaged field (position ${position})`);
          if (rec <= -BigInt(MAX_RECEIVED_MS) || rec >= BigInt(MAX_RECEIVED_MS)) throw bad(`a damaged receive time (position ${position})`);
          if (seq !== null && typeof seq !== 'bigint') throw bad(`a damaged sequence (position ${position})`);
          if (!Buffer.isBuffer(payload)) throw bad(`a damaged payload (position ${position})`);
          if (typeof crc === 'bigint') {
            if (Number(crc) !== legacyRowCrc(position, rec, module, stream, seq, topic, payload)) {
              throw this.corruptAtOpen(`the format-1/2 row at position ${position} fails its checksum`);
            }
          } else if (crc !== null && crc !== undefined) throw bad(`a damaged checksum (position ${position})`);
          else if (crcFrom !== undefined && position >= crcFrom) throw bad(`no checksum (position ${position})`);
          const p = Number(position);
          const bytes = payload.length + Buffer.byteLength(topic) + ROW_OVERHEAD_BYTES;
          if (group.length > 0 && (p !== prev + 1 || group.length >= this.opts.groupEventsMax || groupBytes + bytes > this.opts.groupBytesMax)) emit();
          if (prev > 0 && p !== prev + 1) gapsTo = prev;
          if (group.length === 0) groupFirst = p;
          const s = seq === null ? null : seq >= BigInt(Number.MIN_SAFE_INTEGER) && seq <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(seq) : seq;
          group.push({ topic, module, stream, received: Number(rec), seq: s, payload });
          groupBytes += bytes;
          prev = p;
          after = position;
        }
        if (rows.length < 1000) break;
      }
      emit();
      db.exec('DROP TABLE journal');
      const setMeta = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value');
      setMeta.run('format', JOURNAL_FORMAT);
      const hwm = Math.max(last, prev);
      setMeta.run('last_position', String(hwm));
      // Gaps between the migrated groups, or between the newest of them and the first new group
      // (positions above the newest row were used by rows since deleted), are history, not damage.
      if (gapsTo > 0 || (prev > 0 && hwm > prev)) setMeta.run('legacy_gaps_to', String(hwm));
      db.prepare("DELETE FROM meta WHERE key = 'crc_from'").run();
    })();
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
    // NaN never checked the disk again after the first look: a disk filled since went unnoticed.
    const every = options.checkIntervalMs;
    if (every !== undefined && !(Number.isFinite(every) && every >= 0)) throw new JournalError('InvalidArgument', options.journal.path, `DiskBudget checkIntervalMs: expected a number of ms >= 0, got ${every}`);
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
    // A clock that stepped back (now before the last check) checks again: the answer kept until the
    // clock caught up again said "room" for the whole step while the journal grew past its budget.
    if (now >= this.checkedAtMs && now - this.checkedAtMs < this.o.checkIntervalMs) return this.isFull;
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
