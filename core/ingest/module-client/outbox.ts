// The module's outbox: a better-sqlite3 file that owns each stream's sequence and keeps every
// event from before it is sent until long after Tilstand acknowledged it, so a restart continues
// the sequence and a resync request can be answered. Also remembers the acks of handled commands,
// so a redelivered command is answered again without running twice.
//
// Concurrency: one process owns the file (WAL mode; synchronous=FULL so an appended event is on
// disk before it is published, and an acknowledgement before the publish() it answers resolves).
// Each write is one transaction, so one fsync: an append, and a group of acknowledgements
// (`markAckedMany`: the client commits the PUBACKs of one event-loop turn together; one fsync
// per PUBACK was thousands a second under load). All calls are synchronous.
// Invariants: per stream, seqs are 1, 2, 3, … without gaps and never reused (streams.last_seq
// outlives pruned rows); an unacknowledged event is never pruned; at most events_unacked_max
// events are unacknowledged (append refuses beyond that); per stream at most events_acked_kept_max
// acknowledged events are kept (the oldest go first); at most commands_kept_max command acks.

import Database from 'better-sqlite3';

export interface OutboxOptions {
  /** Acknowledged events kept per stream for resync; older ones are deleted. */
  readonly events_acked_kept_max: number;
  /** Unacknowledged events allowed in total; `append` refuses beyond this (broker gone too long). */
  readonly events_unacked_max: number;
  /** Command acks remembered for redelivered commands. */
  readonly commands_kept_max: number;
}

export const DEFAULT_OUTBOX_OPTIONS: OutboxOptions = {
  events_acked_kept_max: 10_000,
  events_unacked_max: 100_000,
  commands_kept_max: 10_000,
};

export interface OutboxKey {
  readonly stream: string;
  readonly seq: number;
}

export interface OutboxEvent extends OutboxKey {
  readonly payload: string;
}

export class OutboxFullError extends Error {
  constructor(readonly unacked: number) {
    super(`outbox holds ${unacked} unacknowledged events (events_unacked_max); refusing new events until the broker acknowledges`);
    this.name = 'OutboxFullError';
  }
}

export function checkOutboxOptions(o: OutboxOptions): void {
  for (const k of ['events_acked_kept_max', 'events_unacked_max', 'commands_kept_max'] as const) {
    const v = o[k];
    if (!Number.isSafeInteger(v) || v < 1) throw new RangeError(`${k}: expected an integer ≥ 1, got ${String(v)}`);
  }
}

export class Outbox {
  private readonly db: Database.Database;
  private readonly options: OutboxOptions;
  private unackedCount: number;
  /**
   * Per stream, the seq up to which the acknowledged events were pruned; an event at or below it
   * that was unacknowledged then is deleted when it is acknowledged. (Pruning everything up to the
   * retention line on each ack scanned every unacknowledged event below it: after a long outage
   * the backlog's acks were quadratic, minutes of a blocked event loop for 60 000 events.)
   */
  private readonly prunedTo = new Map<string, number>();
  private readonly stmt: {
    lastSeq: Database.Statement<[string], { last_seq: number }>;
    setSeq: Database.Statement<[string, number]>;
    insert: Database.Statement<[string, number, string, number]>;
    ack: Database.Statement<[number, string, number]>;
    prune: Database.Statement<[string, number, number]>;
    pruneOne: Database.Statement<[string, number]>;
    unacked: Database.Statement<[], OutboxEvent>;
    unackedKeys: Database.Statement<[], OutboxKey>;
    get: Database.Statement<[string, number], { payload: string }>;
    from: Database.Statement<[string, number, number], OutboxEvent>;
    seqsFrom: Database.Statement<[string, number, number], number>;
    oldest: Database.Statement<[string], { seq: number | null }>;
    countUnacked: Database.Statement<[], { n: number }>;
    getCommand: Database.Statement<[string], { ack: string }>;
    putCommand: Database.Statement<[string, string, number]>;
    pruneCommands: Database.Statement<[number]>;
  };
  /** markAckedMany's transaction (made once: it runs per group of PUBACKs). Returns how many were unacknowledged. */
  private readonly ackTx: (keys: readonly OutboxKey[], now_ms: number, prunedTo: Map<string, number>) => number;

  constructor(path: string, options: Partial<OutboxOptions> = {}) {
    this.options = { ...DEFAULT_OUTBOX_OPTIONS, ...options };
    checkOutboxOptions(this.options);
    this.db = new Database(path);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL');
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS streams (stream TEXT PRIMARY KEY, last_seq INTEGER NOT NULL) STRICT;
      CREATE TABLE IF NOT EXISTS events (
        stream TEXT NOT NULL, seq INTEGER NOT NULL, payload TEXT NOT NULL,
        created_ms INTEGER NOT NULL, acked_ms INTEGER,
        PRIMARY KEY (stream, seq)) STRICT, WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS events_unacked ON events (stream, seq) WHERE acked_ms IS NULL;
      CREATE TABLE IF NOT EXISTS commands (command_id TEXT PRIMARY KEY, ack TEXT NOT NULL, handled_ms INTEGER NOT NULL) STRICT;
    `);
    this.stmt = {
      lastSeq: this.db.prepare('SELECT last_seq FROM streams WHERE stream = ?'),
      setSeq: this.db.prepare('INSERT INTO streams (stream, last_seq) VALUES (?, ?) ON CONFLICT (stream) DO UPDATE SET last_seq = excluded.last_seq'),
      insert: this.db.prepare('INSERT INTO events (stream, seq, payload, created_ms) VALUES (?, ?, ?, ?)'),
      ack: this.db.prepare('UPDATE events SET acked_ms = ? WHERE stream = ? AND seq = ? AND acked_ms IS NULL'),
      prune: this.db.prepare('DELETE FROM events WHERE stream = ? AND seq > ? AND seq <= ? AND acked_ms IS NOT NULL'),
      pruneOne: this.db.prepare('DELETE FROM events WHERE stream = ? AND seq = ? AND acked_ms IS NOT NULL'),
      unacked: this.db.prepare('SELECT stream, seq, payload FROM events WHERE acked_ms IS NULL ORDER BY stream, seq'),
      unackedKeys: this.db.prepare('SELECT stream, seq FROM events WHERE acked_ms IS NULL ORDER BY stream, seq'),
      get: this.db.prepare('SELECT payload FROM events WHERE stream = ? AND seq = ?'),
      from: this.db.prepare('SELECT stream, seq, payload FROM events WHERE stream = ? AND seq >= ? ORDER BY seq LIMIT ?'),
      // The primary key alone (stream, seq): no payload is read into memory.
      seqsFrom: this.db.prepare<[string, number, number], number>('SELECT seq FROM events WHERE stream = ? AND seq >= ? ORDER BY seq LIMIT ?').pluck(),
      oldest: this.db.prepare('SELECT MIN(seq) AS seq FROM events WHERE stream = ?'),
      countUnacked: this.db.prepare('SELECT COUNT(*) AS n FROM events WHERE acked_ms IS NULL'),
      getCommand: this.db.prepare('SELECT ack FROM commands WHERE command_id = ?'),
      putCommand: this.db.prepare('INSERT OR REPLACE INTO commands (command_id, ack, handled_ms) VALUES (?, ?, ?)'),
      // Newest by rowid (each INSERT OR REPLACE takes the next one), not by handled_ms: after the
      // PC's clock was set back, every command handled since was the "oldest", and its ack pruned
      // at once, so Tilstand's resend of it ran it a second time.
      pruneCommands: this.db.prepare('DELETE FROM commands WHERE rowid IN (SELECT rowid FROM commands ORDER BY rowid DESC LIMIT -1 OFFSET ?)'),
    };
    this.unackedCount = this.stmt.countUnacked.get()!.n;
    // The prune lines reached are staged in `prunedTo` and kept only once the transaction committed.
    this.ackTx = this.db.transaction((keys: readonly OutboxKey[], now_ms: number, prunedTo: Map<string, number>) => {
      let acked = 0;
      for (const { stream, seq } of keys) {
        acked += this.stmt.ack.run(now_ms, stream, seq).changes;
        const keepFrom = this.lastSeq(stream) - this.options.events_acked_kept_max;
        const pruned = prunedTo.get(stream) ?? this.prunedTo.get(stream) ?? 0;
        if (seq <= pruned) this.stmt.pruneOne.run(stream, seq);
        if (keepFrom > pruned) {
          this.stmt.prune.run(stream, pruned, keepFrom);
          prunedTo.set(stream, keepFrom);
        }
      }
      return acked;
    });
  }

  lastSeq(stream: string): number {
    return this.stmt.lastSeq.get(stream)?.last_seq ?? 0;
  }

  /** Takes the stream's next seq and stores the event built for it, in one transaction. */
  append(stream: string, now_ms: number, build: (seq: number) => string): OutboxEvent {
    if (this.unackedCount >= this.options.events_unacked_max) throw new OutboxFullError(this.unackedCount);
    const run = this.db.transaction(() => {
      const seq = this.lastSeq(stream) + 1;
      const payload = build(seq);
      this.stmt.insert.run(stream, seq, payload, now_ms);
      this.stmt.setSeq.run(stream, seq);
      return { stream, seq, payload };
    });
    const event = run();
    this.unackedCount++;
    return event;
  }

  /** Marks an event acknowledged (idempotent) and prunes the stream's acknowledged tail. */
  markAcked(stream: string, seq: number, now_ms: number): void {
    this.markAckedMany([{ stream, seq }], now_ms);
  }

  /**
   * Marks events acknowledged (idempotent) and prunes their streams' acknowledged tails, in one
   * transaction: on disk all together once this returns, or (it throws) none of them.
   */
  markAckedMany(keys: readonly OutboxKey[], now_ms: number): void {
    if (keys.length === 0) return;
    const prunedTo = new Map<string, number>();
    this.unackedCount -= this.ackTx(keys, now_ms, prunedTo);
    for (const [stream, seq] of prunedTo) this.prunedTo.set(stream, seq);
  }

  unacked(): OutboxEvent[] {
    return this.stmt.unacked.all();
  }

  /** The stream and seq of every unacknowledged event, without payloads (a long outage's backlog stays on disk). */
  unackedKeys(): OutboxKey[] {
    return this.stmt.unackedKeys.all();
  }

  /** One event's payload; undefined when it was never stored or has been pruned. */
  payload(stream: string, seq: number): string | undefined {
    return this.stmt.get.get(stream, seq)?.payload;
  }

  /** Events of a stream from `seq` on (acknowledged or not), at most `limit`. */
  from(stream: string, seq: number, limit: number): OutboxEvent[] {
    return this.stmt.from.all(stream, seq, limit);
  }

  /** The seqs of a stream's events from `seq` on (acknowledged or not), at most `limit`, without their payloads. */
  seqsFrom(stream: string, seq: number, limit: number): number[] {
    return this.stmt.seqsFrom.all(stream, seq, limit);
  }

  /** The oldest seq still kept for a stream; undefined when none is. */
  oldestKept(stream: string): number | undefined {
    return this.stmt.oldest.get(stream)?.seq ?? undefined;
  }

  commandAck(commandId: string): string | undefined {
    return this.stmt.getCommand.get(commandId)?.ack;
  }

  recordCommand(commandId: string, ack: string, now_ms: number): void {
    this.stmt.putCommand.run(commandId, ack, now_ms);
    this.stmt.pruneCommands.run(this.options.commands_kept_max);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
